"""Tier 2, diagnostic: format_diagnostic and bound_diagnostic against the golden vectors, the
grammar, the failure-line field table, the 4096-byte bound (and that no result of settle_run or
a provider carries a longer diagnostic), and committed snapshots of every stage and category
each product's stages table allows.

Expected values come from the spec: a vector's ``expected``, the grammar of diagnostic.yaml,
the oracles of conformance/diagnostic.py (built from its tables), and the snapshots in
conformance/__snapshots__/ (generated once from the reference with ``--snapshot-update``
and reviewed against the spec; a missing snapshot fails).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from conformance import codex
from conformance.adapter import Adapter
from conformance.claude_code import planted_scenarios, replace_canaries
from conformance.codex import instantiate, planted_runs
from conformance.diagnostic import (
    AGGREGATE_SEPARATOR,
    PERMISSION_SEPARATOR,
    bound,
    expected_fields,
    format_requests,
    in_order,
    line_fields,
    product,
    products,
    snapshot_cases,
    snapshot_requests,
    texts_beyond,
    texts_within,
)
from conformance.grammar import roots
from conformance.report import NOT_APPLICABLE
from conformance.results import content_blocks, diagnostic_stop_reasons
from conformance.selection import steps_for
from conformance.spec import Spec, expand_text, load_spec

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = load_spec()
_MATCHERS = roots(_SPEC)
_BOUND = bound(_SPEC)
PRODUCTS = [pytest.param(p.label, id=p.area) for p in products(_SPEC)]
FAILURE_LINE = ["DIA-001", "DIA-002", "DIA-003", "DIA-004", "DIA-005", "DIA-006", "DIA-007", "DIA-008", "DIA-009"]


def _claim_product(claim: Claim, label: str) -> None:
    claim("providers", product(_SPEC, label).area)


def _bound_applicable(adapter: Adapter) -> None:
    if not (adapter.declaration.get("bindings") or adapter.declaration.get("providers")):
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no binding and no provider (nothing carries a diagnostic)")


def _format(adapter: Adapter, request: Json) -> str:
    text: str = adapter.call("format_diagnostic", request)["text"]
    return text


def _check_grammar(label: str, kind: str, text: str, request: Json) -> None:
    assert _MATCHERS[(label, kind)].matches(text), (
        f"format_diagnostic({request}) gave {text!r}, which is not a sentence of the {kind} grammar of {label}"
    )


# ---------------------------------------------------------------- golden vectors


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, id=v["name"], marks=requirement(*v["covers"]))
        for v in _SPEC.table("diagnostic", "line_vectors").rows
    ],
)
def test_line_vector(adapter: Adapter, claim: Claim, vector: Json) -> None:
    _claim_product(claim, vector["facts"]["product"])
    text = _format(adapter, {"kind": vector["kind"], "facts": vector["facts"]})
    assert text == expand_text(vector["expected"])


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, id=v["name"], marks=requirement(*v["covers"]))
        for v in _SPEC.table("diagnostic", "bound_vectors").rows
    ],
)
def test_bound_vector(adapter: Adapter, vector: Json) -> None:
    _bound_applicable(adapter)
    expected = expand_text(vector["expected"])
    actual = adapter.call("bound_diagnostic", {"text": expand_text(vector["input"])})["text"]
    if actual != expected:  # say where, not 4096 characters of diff
        common = next((i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b), None)
        assert actual == expected, (
            f"{len(actual.encode())} bytes instead of {vector['expected_bytes']}; first difference at "
            f"character {common}: got {actual[-40:]!r} at the end, expected {expected[-40:]!r}"
        )


# ---------------------------------------------------------------- the bound


@requirement("DIA-019")
def test_bound_keeps_every_text_within_the_limit(adapter: Adapter) -> None:
    _bound_applicable(adapter)

    @given(text=texts_within(_BOUND.limit, _BOUND.budget))
    def check(text: str) -> None:
        assert len(text.encode()) <= _BOUND.limit
        actual = adapter.call("bound_diagnostic", {"text": text})["text"]
        assert actual == text, f"a text of {len(text.encode())} bytes must pass unchanged"

    check()


@requirement("DIA-020")
def test_bound_cuts_a_longer_text_on_a_code_point_boundary(adapter: Adapter) -> None:
    _bound_applicable(adapter)

    @given(text=texts_beyond(_BOUND.limit))
    def check(text: str) -> None:
        size = len(text.encode())
        assert size > _BOUND.limit
        actual = adapter.call("bound_diagnostic", {"text": text})["text"]
        where = f"a text of {size} bytes ending {text[-8:]!r}"
        assert len(actual.encode()) <= _BOUND.limit, f"{where} bounded to {len(actual.encode())} bytes"
        assert actual.endswith(_BOUND.marker), f"{where} bounded without the marker: {actual[-30:]!r}"
        kept = actual[: -len(_BOUND.marker)]
        assert text.startswith(kept), f"{where}: the kept part is not a code-point prefix of the input"
        assert "\ufffd" not in actual or "\ufffd" in text, f"{where}: the bound introduced U+FFFD"
        assert actual == _BOUND.expected(text), (
            f"{where}: kept {len(kept.encode())} bytes, but the longest prefix that fits keeps "
            f"{len(_BOUND.expected(text).encode()) - len(_BOUND.marker.encode())}"
        )

    check()


@st.composite
def _long_settlements(draw: st.DrawFn, spec: Spec, bindings: list[str]) -> Json:
    """Out-of-process settlements whose attempt carries a diagnostic past the bound: a result
    the provider returned, or a diagnostic collected from a rejection."""
    binding = draw(st.sampled_from(bindings))
    steps = draw(steps_for(binding))
    text = draw(texts_beyond(_BOUND.limit))
    stop_reason = draw(st.sampled_from(diagnostic_stop_reasons(spec)))  # results RES-028: what a provider returns
    returned = {"output": draw(content_blocks()), "stopReason": stop_reason, "diagnostic": text}
    attempt = draw(
        st.sampled_from([{"outcome": "returned", "result": returned}, {"outcome": "rejected", "diagnostic": text}])
    )
    return {
        "binding": binding,
        "shape": "one-shot",
        "driver": "out-of-process",
        "steps": steps,
        "boundary": draw(st.integers(0, len(steps))),
        "cancelled": draw(st.integers(0, 4)) == 0,
        "attempt": attempt,
    }


@st.composite
def _long_codex_runs(draw: st.DrawFn, spec: Spec) -> Json:
    """A Codex run with a text past the bound at every placeholder of a canary site."""
    template, count = draw(planted_runs(spec, draw(st.sampled_from(sorted(codex.PLANTERS)))))
    run: Json = instantiate(template, [draw(texts_beyond(_BOUND.limit)) for _ in range(count)])
    return run


@st.composite
def _long_claude_runs(draw: st.DrawFn, spec: Spec) -> Json:
    """A Claude Code run with a text past the bound wherever a canary was planted."""
    scenario, _, _ = draw(planted_scenarios(spec))
    run: Json = replace_canaries(scenario, draw(texts_beyond(_BOUND.limit)))
    return run


@requirement("DIA-021")
@pytest.mark.parametrize("op", ["settle_run", "claude_code_outcome", "codex_outcome"])
def test_no_result_carries_a_diagnostic_past_the_bound(adapter: Adapter, claim: Claim, spec: Spec, op: str) -> None:
    """Whatever path produced it (a result the provider returned, a diagnostic collected from a
    rejection, a provider's own failure after observing texts past the bound at every canary
    site), the diagnostic of a result fits the bound."""
    if op == "settle_run":
        bindings = [str(b) for b in spec.vocabulary("selection.binding").values if adapter.claims("bindings", str(b))]
        if not bindings:
            pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no selection binding (settle_run belongs to harnesses)")
        requests = _long_settlements(spec, bindings)
    elif op == "codex_outcome":
        claim("providers", "codex")
        requests = _long_codex_runs(spec)
    else:
        claim("providers", "claude-code")
        requests = _long_claude_runs(spec)

    @settings(max_examples=max(10, settings().max_examples // 4))
    @given(request=requests)
    def check(request: Json) -> None:
        answer = adapter.call(op, request)
        result = answer["result"] if op == "settle_run" else answer
        if "diagnostic" in result:
            size = len(result["diagnostic"].encode("utf-8"))
            assert size <= _BOUND.limit, (
                f"{op} returned a result whose diagnostic has {size} bytes, more than the bound of {_BOUND.limit}; "
                f"it ends {result['diagnostic'][-60:]!r}"
            )

    check()


# ---------------------------------------------------------------- format_diagnostic properties


@requirement(*FAILURE_LINE, "DIA-010", "DIA-018")
@pytest.mark.parametrize("label", PRODUCTS)
def test_failure_line_fields_follow_the_field_table(adapter: Adapter, claim: Claim, spec: Spec, label: str) -> None:
    _claim_product(claim, label)

    @given(request=format_requests(spec, label, ["failure-line"]))
    def check(request: Json) -> None:
        text = _format(adapter, request)
        facts = {k: v for k, v in request["facts"].items() if k != "product"}
        expected = expected_fields(spec, label, facts)
        assert line_fields(text) == expected, (
            f"format_diagnostic({request}) gave {text!r}; table failure_line_fields gives the fields "
            + "; ".join(f"{name}: {value}" for name, value in expected)
        )
        _check_grammar(label, "failure-line", text, request)

    check()


@requirement("DIA-018", "RED-002", "RED-003")
@pytest.mark.parametrize("label", PRODUCTS)
def test_every_text_is_a_sentence_of_the_grammar(adapter: Adapter, claim: Claim, spec: Spec, label: str) -> None:
    _claim_product(claim, label)

    @given(request=format_requests(spec, label))
    def check(request: Json) -> None:
        _check_grammar(label, request["kind"], _format(adapter, request), request)

    check()


@requirement("DIA-001", "DIA-011", "DIA-012", "DIA-015", "DIA-016")
@pytest.mark.parametrize("label", PRODUCTS)
def test_texts_compose_from_the_failure_and_permission_lines(
    adapter: Adapter, claim: Claim, spec: Spec, label: str
) -> None:
    _claim_product(claim, label)
    prefix = product(spec, label).error_prefix

    def line(failure: Json) -> str:
        return _format(adapter, {"kind": "failure-line", "facts": {"product": label, **failure}})

    @given(
        request=format_requests(spec, label, ["permission-line", "run-result", "start-rejection", "dispose-rejection"])
    )
    def check(request: Json) -> None:
        kind, facts = request["kind"], request["facts"]
        text = _format(adapter, request)
        if kind == "permission-line":  # the composed kinds' own shape is the grammar test's
            _check_grammar(label, kind, text, request)
            parts = [label, facts["mode"], facts["request"], facts["decision"], facts["reason"]]
            assert text.startswith(label) and text.endswith(facts["reason"]) and in_order(text, parts), (
                f"format_diagnostic({request}) gave {text!r}, which does not name the facts' row and mode"
            )
            return
        if kind == "run-result":
            failure = {k: v for k, v in facts.items() if k not in ("product", "permission")}
            expected = line(failure)
            if "permission" in facts:
                permission = {"kind": "permission-line", "facts": {"product": label, **facts["permission"]}}
                expected += PERMISSION_SEPARATOR + _format(adapter, permission)
        else:
            expected = AGGREGATE_SEPARATOR.join(prefix + line(failure) for failure in facts["failures"])
        assert text == expected, f"format_diagnostic({request}) gave {text!r}; composed from its lines: {expected!r}"

    check()


# ---------------------------------------------------------------- snapshots


@requirement(*FAILURE_LINE, "DIA-015", "DIA-016")
@pytest.mark.parametrize(
    ("label", "stage", "category"),
    [pytest.param(label, stage, category, id=case) for case, label, stage, category in snapshot_cases(_SPEC)],
)
def test_snapshot_of_every_stage_and_category(
    adapter: Adapter, claim: Claim, spec: Spec, snapshot: SnapshotAssertion, label: str, stage: str, category: str
) -> None:
    _claim_product(claim, label)
    texts = {
        name: _format(adapter, request) for name, request in snapshot_requests(spec, label, stage, category).items()
    }
    assert texts == snapshot
