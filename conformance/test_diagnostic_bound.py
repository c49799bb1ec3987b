"""Tier 2, diagnostic_bound: bound_diagnostic against the 4096-byte bound as a property (a text
within the limit comes back unchanged, a longer one is cut on a code-point boundary), and no
result of settle_run or a provider carries a longer diagnostic, whatever path produced it.

The limit and the marker come from diagnostic.yaml's bound_vectors (conformance/areas/diagnostic/
oracle.py); the vectors themselves are the diagnostic tier's (conformance/test_diagnostic.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.claude_code.canaries import planted_scenarios, replace_canaries
from conformance.areas.codex.canaries import PLANTERS, instantiate, planted_runs
from conformance.areas.diagnostic.bound_checks import bound_applicable, bound_as_vector, bound_violation
from conformance.areas.diagnostic.oracle import bound
from conformance.areas.diagnostic.strategies import marked_texts_beyond, texts_beyond, texts_within
from conformance.areas.results.strategies import content_blocks, diagnostic_stop_reasons
from conformance.areas.selection.strategies import steps_for
from conformance.harness.adapter import Adapter
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation, utf8_size
from conformance.verdict.reach import share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"bound_diagnostic", "claude_code_outcome", "codex_outcome", "settle_run"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
claims = pytest.mark.claims  # what a test (parameter) needs claimed, checked first (conformance/conftest.py)
_BOUND = bound(load_spec())


@requirement("DIA-019")
@claims("operations", "bound_diagnostic")
def test_bound_keeps_every_text_within_the_limit(adapter: Adapter) -> None:
    bound_applicable(adapter)

    @given(text=texts_within(_BOUND.limit, _BOUND.budget))
    def check(text: str) -> None:
        assert len(text.encode()) <= _BOUND.limit, "the strategy drew a text past the limit"
        actual = adapter.call("bound_diagnostic", {"text": text})["text"]
        if actual != text:
            raise bound_violation(_BOUND, text, text, actual, bound_as_vector(_BOUND, text, text))

    check()


@requirement("DIA-020")
@claims("operations", "bound_diagnostic")
def test_bound_cuts_a_longer_text_on_a_code_point_boundary(adapter: Adapter) -> None:
    """The cut (DIA-020's algorithm, walked code point by code point by the oracle); the
    violation's detail says whether the result is too long, lacks the marker, splits a code
    point or keeps too little."""
    bound_applicable(adapter)

    def check_one(text: str) -> None:
        assert len(text.encode()) > _BOUND.limit, "the strategy drew a text within the limit"
        actual = adapter.call("bound_diagnostic", {"text": text})["text"]
        expected = _BOUND.expected(text)
        if actual != expected:
            raise bound_violation(_BOUND, text, expected, actual, bound_as_vector(_BOUND, text, expected))

    for text in marked_texts_beyond(_BOUND.limit, _BOUND.budget):  # combining marks and RTL at the cut
        check_one(text)

    @given(text=texts_beyond(_BOUND.limit))
    def check(text: str) -> None:
        check_one(text)

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
    template, count = draw(planted_runs(spec, draw(st.sampled_from(sorted(PLANTERS)))))
    run: Json = instantiate(template, [draw(texts_beyond(_BOUND.limit)) for _ in range(count)])
    return run


@st.composite
def _long_claude_runs(draw: st.DrawFn, spec: Spec) -> Json:
    """A Claude Code run with a text past the bound wherever a canary was planted."""
    scenario, _, _ = draw(planted_scenarios(spec))
    run: Json = replace_canaries(scenario, draw(texts_beyond(_BOUND.limit)))
    return run


@requirement("DIA-021")
@pytest.mark.parametrize(
    "op",
    [
        # settle_run's only path whose result carries a diagnostic: out-of-process (ADP-026)
        pytest.param("settle_run", marks=[claims("operations", "settle_run"), claims("settlements", "out-of-process")]),
        pytest.param("claude_code_outcome", marks=[claims("providers", "claude-code")]),
        pytest.param("codex_outcome", marks=[claims("providers", "codex")]),
    ],
)
def test_no_result_carries_a_diagnostic_past_the_bound(adapter: Adapter, claim: Claim, spec: Spec, op: str) -> None:
    """Whatever path produced it (a result the provider returned, a diagnostic collected from a
    rejection, a provider's own failure after observing texts past the bound at every canary
    site), the diagnostic of a result fits the bound."""
    claim("operations", op)
    if op == "settle_run":
        bindings = [str(b) for b in spec.vocabulary("selection.binding").values if adapter.claims("bindings", str(b))]
        requests = _long_settlements(spec, bindings)
    elif op == "codex_outcome":
        requests = _long_codex_runs(spec)
    else:
        requests = _long_claude_runs(spec)

    @share(4, floor=10)
    @given(request=requests)
    def check(request: Json) -> None:
        answer = adapter.call(op, request)
        result = answer["result"] if op == "settle_run" else answer
        if "diagnostic" in result:
            size = utf8_size(result["diagnostic"])
            if size > _BOUND.limit:
                raise Violation(
                    ["DIA-021"],
                    operation=op,
                    input=request,
                    expected=f"a diagnostic of at most {_BOUND.limit} UTF-8 bytes",
                    actual=answer,
                    detail=f"the diagnostic has {size} UTF-8 bytes, {size - _BOUND.limit} past the bound; "
                    f"it ends {result['diagnostic'][-60:]!r}",
                )

    check()
