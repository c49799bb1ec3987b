"""Tier 2, claude_code_redaction: claude_code_outcome against the redaction allow-list.
Canaries planted at every Claude Code site of redaction.yaml's canary_sites never reach the
diagnostic, which stays a sentence of the grammar and does not change when decoys replace them.

The expected results come from the oracle of conformance.areas.claude_code.oracle, as in the
claude_code tier (conformance/test_claude_code.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.claude_code.canaries import DECOYS, PLANTERS, outcome_sites, planted_scenarios, replace_canaries
from conformance.areas.claude_code.checks import check_answer, diagnosis, outcome, run_result_grammar
from conformance.areas.claude_code.oracle import PRODUCT
from conformance.areas.codex.blame import raw_strings
from conformance.harness.adapter import Adapter
from conformance.plugin import contract
from conformance.spec import Spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"claude_code_outcome"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = contract()  # the spec at the claimed product versions


def _claude(claim: Claim) -> None:
    claim("providers", "claude-code")


@requirement(
    "RED-001",
    "RED-002",
    "RED-003",
    "RED-005",
    "RED-008",
    "DIA-018",
    "CC-008",
    "CC-009",
    "CC-016",
    "CC-025",
)
@pytest.mark.parametrize(
    "site",
    [
        pytest.param(p.values[0]["site"], id=p.values[0]["site"], marks=p.marks)
        for p in row_params(
            _SPEC,
            "redaction",
            "canary_sites",
            where=lambda r: r["product"] == PRODUCT and "claude_code_outcome" in r["plant_via"],
        )
    ],
)
def test_canaries_never_reach_the_diagnostic(adapter: Adapter, claim: Claim, spec: Spec, site: str) -> None:
    """Canaries planted in every raw field the scenario can carry (errors[], unknown subtypes,
    result text, permission_denied fields, SDK message payloads, the exception's message): none
    reaches the diagnostic, which is a sentence of the grammar and the same as when decoys that
    spell categories, fields and lines replace the canaries."""
    _claude(claim)
    run_result = run_result_grammar(spec)

    # Stratified by site: every site is planted on every run, with a share of the examples.
    @share(4)
    @given(planted=planted_scenarios(spec, site), decoy=st.sampled_from(DECOYS))
    def check(planted: tuple[Json, list[str], list[str]], decoy: str) -> None:
        scenario, canaries, sites = planted
        actual: Json = adapter.call("claude_code_outcome", scenario)
        diagnostic = actual.get("diagnostic", "")
        leaked = [canary for canary in canaries if canary.lower() in diagnostic.lower()]
        if leaked:  # blamed on the rule of each source a canary came from, not on the site
            sources = [path for path, value in raw_strings(scenario) for c in leaked if c in value]
            copied = diagnosis(spec).copied_rules(scenario, diagnostic, outcome(adapter))
            raise Violation(
                copied or [r for canary in leaked for r in diagnosis(spec).canary_rules(scenario, canary)],
                operation="claude_code_outcome",
                input=scenario,
                expected=f"no diagnostic containing the canaries {leaked!r} (planted at {', '.join(sites)})",
                actual=actual,
                detail=f"canaries {leaked!r} copied from {', '.join(dict.fromkeys(sources))} into {diagnostic!r}",
            )
        check_answer(adapter, spec, scenario)
        if diagnostic and not run_result.matches(diagnostic):
            raise Violation(
                ["RED-002"],
                operation="claude_code_outcome",
                input=scenario,
                expected="a grammar sentence",
                actual=actual,
            )
        twin_scenario = replace_canaries(scenario, decoy)
        twin = adapter.call("claude_code_outcome", twin_scenario)
        if (twin["stopReason"], twin.get("diagnostic")) != (actual["stopReason"], actual.get("diagnostic")):
            raise Violation(
                ["RED-005"],
                operation="claude_code_outcome",
                input={"with canaries": scenario, "with decoys": twin_scenario},
                expected=actual,
                actual=twin,
                detail=f"replacing the canaries at {sites} by {decoy!r} changed the result",
            )

    check()


_CANARY = "SECRET_0e1f2a3b"
# Every kind of element errors[] may hold, with a canary wherever the element can carry text.
_ERROR_ELEMENTS: dict[str, Any] = {
    "string": _CANARY,
    "empty-object": {},
    "object-value": {"message": _CANARY},
    "object-key": {_CANARY: 1},
    "nested-object": {"error": {"type": "api_error", "detail": f"/private/{_CANARY}/secret.txt"}},
    "array-in-object": {"messages": [_CANARY, None]},
    "array": [_CANARY],
}


@requirement("CC-008")
@pytest.mark.parametrize("element", sorted(_ERROR_ELEMENTS), ids=str)
@pytest.mark.parametrize("subtype", [str(v) for v in _SPEC.vocabulary("claude-code.error_subtype").values], ids=str)
def test_error_elements_never_reach_the_diagnostic(
    adapter: Adapter, claim: Claim, spec: Spec, subtype: str, element: str
) -> None:
    """Each kind of element of an error result's errors[] (a string, objects empty, with text in
    a value, a key or deeper, an array), beside a string one: the failure line is the row's and
    holds none of them, on every run (the canary site draws them too, by chance)."""
    _claude(claim)
    errors = [_ERROR_ELEMENTS[element], "plain error"]
    message = {"type": "result", "subtype": subtype, "is_error": True, "errors": errors}
    mode = str(_SPEC.vocabulary("claude-code.permission_mode").values[0])
    scenario: Json = {"mode": mode, "events": [{"message": message}]}
    actual = check_answer(adapter, spec, scenario)
    if _CANARY in actual.get("diagnostic", ""):
        raise Violation(
            diagnosis(spec).copied_rules(scenario, actual["diagnostic"], outcome(adapter)) or ["CC-008"],
            operation="claude_code_outcome",
            input=scenario,
            expected=f"no diagnostic containing {_CANARY!r}",
            actual=actual,
        )


@requirement("RED-008")
def test_every_claude_canary_site_is_planted(claim: Claim, spec: Spec) -> None:
    """The canary test covers every Claude Code row of canary_sites that claude_code_outcome can plant."""
    _claude(claim)
    sites = set(outcome_sites(spec))
    assert set(PLANTERS) == sites, f"planted {sorted(PLANTERS)}, the spec lists {sorted(sites)}"
