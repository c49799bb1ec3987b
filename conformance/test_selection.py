"""Tier 2, selection: golden vectors and properties of select_output and fold_output.

Every expected value comes from the spec: a golden vector's ``expected``, or the oracle
built from the selection tables. A failure is blamed on the rule that tells the adapter's
value from the rule's (conformance/areas/selection/blame.py), not on every marker of its test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.selection.blame import check_folded, check_selected, first_fold_difference
from conformance.areas.selection.oracle import oracle_values, reached_rows
from conformance.areas.selection.strategies import steps_for
from conformance.harness.adapter import Adapter
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"fold_output", "select_output"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = load_spec()
EVENT_BINDINGS = ["chunk-events", "embedded-stream"]
ALL_BINDINGS = [*EVENT_BINDINGS, "text-stream"]


def _vector_marks(vector: Json) -> list[pytest.MarkDecorator]:
    """A vector's coverage, and the rows of tables bindings, stream_records and stream_chunks
    it exercises: the rule reads them from its steps (reached_rows), so checking its value
    checks how each is read. Every row of those tables is reached by some vector."""
    reached = sorted(reached_rows(_SPEC, vector["binding"], vector["steps"]))
    return [requirement("SEL-027", *vector["covers"]), *(pytest.mark.reaches(t, i) for t, i in reached)]


def _probe(adapter: Adapter, binding: str) -> Callable[[list[Json]], Any]:
    return lambda steps: adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})


def _events(steps: list[Json]) -> list[Json] | None:
    events = [step["event"] for step in steps if "event" in step]
    return events if len(events) == len(steps) else None


@pytest.mark.parametrize("vector", row_params(_SPEC, "selection", "golden_vectors", marks=_vector_marks))
def test_golden_vector(adapter: Adapter, claim: Claim, spec: Spec, vector: Json) -> None:
    binding, steps = vector["binding"], vector["steps"]
    claim("bindings", binding)
    check_folded(spec, binding, steps, adapter.call("fold_output", {"binding": binding, "steps": steps}))
    events = _events(steps)
    if events is not None and binding in EVENT_BINDINGS:
        actual = adapter.call("select_output", {"binding": binding, "events": events})
        check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding))


SELECTION_RULE = [f"SEL-{n:03d}" for n in range(1, 15)]


@requirement(*SELECTION_RULE, "SEL-015", "SEL-016", "SEL-017", "SEL-018", "SEL-019", "SEL-024")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_select_output_follows_the_rule(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[Json]) -> None:
        actual = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding))

    check()


@requirement(*SELECTION_RULE, "SEL-021", "SEL-025", "SEL-026")
@pytest.mark.parametrize("binding", ALL_BINDINGS)
def test_fold_after_every_prefix_is_the_rule_on_that_prefix(
    adapter: Adapter, claim: Claim, spec: Spec, binding: str
) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[Json]) -> None:
        check_folded(spec, binding, steps, adapter.call("fold_output", {"binding": binding, "steps": steps}))

    check()


@requirement("SEL-024")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_select_output_equals_the_folds_last_value(adapter: Adapter, claim: Claim, binding: str) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[Json]) -> None:
        folded = adapter.call("fold_output", {"binding": binding, "steps": steps})
        events = [s["event"] for s in steps]
        selected = adapter.call("select_output", {"binding": binding, "events": events})
        last = folded[-1] if folded else None
        if selected != last:
            raise Violation(
                ["SEL-024"],
                operation="select_output",
                input={"binding": binding, "events": events},
                expected=last,
                actual=selected,
                detail="select_output must equal the last value fold_output collects over the same events",
            )

    check()


@requirement("SEL-022")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_pushed_text_shares_the_fallback_with_events(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)
    claim("bindings", "text-stream")

    @given(steps=steps_for(binding), texts=steps_for("text-stream"), data=st.data())
    def check(steps: list[Json], texts: list[Json], data: st.DataObject) -> None:
        mixed = list(steps)
        for text in texts:
            mixed.insert(data.draw(st.integers(0, len(mixed))), text)
        actual = adapter.call("fold_output", {"binding": binding, "steps": mixed})
        whole = isinstance(actual, list) and actual and len(actual) == len(mixed)
        # The step that first made the fold wrong decides: a usage-only empty message that cleared
        # the message is SEL-003's, whatever buffers the fallback then shows.
        found = first_fold_difference(spec, binding, mixed, actual) if whole else None
        got = actual[-1] if whole else None
        expected = oracle_values(spec, binding, mixed)[-1] if mixed else None
        separate = [oracle_values(spec, binding, part)[-1] for part in (steps, texts) if part]
        cleared = found is not None and found[1] == ["SEL-003"]
        if got != expected and isinstance(got, list) and got and got in separate and not cleared:
            # The fold kept one kind of piece in a buffer of its own: that is what SEL-022 forbids.
            raise Violation(
                ["SEL-022"],
                operation="fold_output",
                input={"binding": binding, "steps": mixed},
                expected=expected,
                actual=got,
                detail="pushed text and event pieces go to one fallback buffer, in step order",
            )
        check_folded(spec, binding, mixed, actual)

    check()
