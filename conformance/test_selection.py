"""Tier 2, selection: golden vectors and properties of select_output and fold_output.

Every expected value comes from the spec: a golden vector's ``expected``, or the oracle
built from the selection tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.adapter import Adapter
from conformance.selection import assert_selection, oracle_values, steps_for
from conformance.spec import Spec, load_spec

Claim = Callable[[str, str], None]
requirement = pytest.mark.requirement

VECTORS = load_spec().table("selection", "golden_vectors").rows
EVENT_BINDINGS = ["chunk-events", "embedded-stream"]
ALL_BINDINGS = [*EVENT_BINDINGS, "text-stream"]


def _events(steps: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    events = [step["event"] for step in steps if "event" in step]
    return events if len(events) == len(steps) else None


@pytest.mark.parametrize(
    "vector",
    [pytest.param(v, id=v["name"], marks=requirement("SEL-027", *v["covers"])) for v in VECTORS],
)
def test_golden_vector(adapter: Adapter, claim: Claim, vector: dict[str, Any]) -> None:
    binding, steps, covers = vector["binding"], vector["steps"], [*vector["covers"]]
    claim("bindings", binding)
    values = adapter.call("fold_output", {"binding": binding, "steps": steps})
    assert len(values) == len(steps), "fold_output must give one collected value per step"
    if steps:
        assert_selection(binding, covers, steps, vector["expected"], values[-1], "fold_output after the last step")
    events = _events(steps)
    if events is not None and binding in EVENT_BINDINGS:
        actual = adapter.call("select_output", {"binding": binding, "events": events})
        assert_selection(binding, covers, steps, vector["expected"], actual, "select_output")


SELECTION_RULE = [
    "SEL-001",
    "SEL-002",
    "SEL-003",
    "SEL-004",
    "SEL-005",
    "SEL-006",
    "SEL-007",
    "SEL-008",
    "SEL-009",
    "SEL-010",
    "SEL-011",
    "SEL-012",
    "SEL-013",
    "SEL-014",
]


@requirement(*SELECTION_RULE, "SEL-015", "SEL-016", "SEL-017", "SEL-018", "SEL-019", "SEL-024")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_select_output_follows_the_rule(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[dict[str, Any]]) -> None:
        expected = oracle_values(spec, binding, steps)[-1] if steps else None
        actual = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        assert_selection(binding, SELECTION_RULE, steps, expected, actual, "select_output")

    check()


@requirement(*SELECTION_RULE, "SEL-021", "SEL-025", "SEL-026")
@pytest.mark.parametrize("binding", ALL_BINDINGS)
def test_fold_after_every_prefix_is_the_rule_on_that_prefix(
    adapter: Adapter, claim: Claim, spec: Spec, binding: str
) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[dict[str, Any]]) -> None:
        expected = oracle_values(spec, binding, steps)
        actual = adapter.call("fold_output", {"binding": binding, "steps": steps})
        assert len(actual) == len(steps), "fold_output must give one collected value per step"
        for n, (want, got) in enumerate(zip(expected, actual, strict=True)):
            assert_selection(binding, SELECTION_RULE, steps[: n + 1], want, got, f"fold_output after step {n + 1}")

    check()


@requirement("SEL-024")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_select_output_equals_the_folds_last_value(adapter: Adapter, claim: Claim, binding: str) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[dict[str, Any]]) -> None:
        folded = adapter.call("fold_output", {"binding": binding, "steps": steps})
        selected = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        assert selected == (folded[-1] if folded else None)

    check()


@requirement("SEL-022")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_pushed_text_shares_the_fallback_with_events(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)
    claim("bindings", "text-stream")

    @given(steps=steps_for(binding), texts=steps_for("text-stream"), data=st.data())
    def check(steps: list[dict[str, Any]], texts: list[dict[str, Any]], data: st.DataObject) -> None:
        mixed = list(steps)
        for text in texts:
            mixed.insert(data.draw(st.integers(0, len(mixed))), text)
        expected = oracle_values(spec, binding, mixed)
        actual = adapter.call("fold_output", {"binding": binding, "steps": mixed})
        assert_selection(
            binding,
            ["SEL-022"],
            mixed,
            expected[-1] if mixed else None,
            actual[-1] if actual else None,
            "fold_output over events and pushed text",
        )

    check()
