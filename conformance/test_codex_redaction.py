"""Tier 2, codex_redaction: codex_outcome against the redaction allow-list. A canary planted at
any Codex site of redaction.yaml that codex_outcome can plant reaches no diagnostic and no
reply, every diagnostic is a sentence of the grammar, and decoys in the canaries' places give
the same texts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.codex.blame import raw_strings
from conformance.areas.codex.canaries import PLANTERS, canary_names, decoy_names, instantiate, planted_runs
from conformance.areas.codex.checks import Outcome, codex_checks
from conformance.plugin import contract
from conformance.spec import Spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"codex_outcome"})

Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = contract()  # the spec at the claimed product versions
CHECKS = codex_checks(_SPEC)
ORACLE = CHECKS.oracle


def _planted_via_outcome(row: Json) -> bool:
    return bool(row["product"] == ORACLE.product and "codex_outcome" in row["plant_via"])


CANARY_SITES = [row for row in _SPEC.table("redaction", "canary_sites").rows if _planted_via_outcome(row)]
# The rules of the raw fields each site plants into (conformance/areas/codex/sources.py): what a
# leak from them is blamed on. Every site's run may also carry canaries on stderr (CDX-041, RED-006).
SITE_REQUIREMENTS = {
    "turn-error-message": ["CDX-009"],
    "turn-error-additional-details": ["CDX-009"],
    "active-turn-kind": ["CDX-005"],
    "unknown-variant": ["CDX-004", "CDX-006"],
    "approval-request-command": ["CDX-036"],
    "command-item-command": ["CDX-036"],
    "file-change-patch": ["CDX-036"],
    "server-request-payload": ["CDX-034", "CDX-036"],
    "error-notification": ["CDX-023"],
    "rpc-error-message": ["CDX-027", "CDX-051"],
    "protocol-id": ["CDX-036", "CDX-058"],
    "stderr-chunk": ["CDX-041", "RED-006"],
}


def _without_ids(replies: list[Json]) -> list[Json]:
    return [{k: v for k, v in reply.items() if k != "id"} for reply in replies]


def _site_marks(row: Json) -> list[pytest.MarkDecorator]:
    return [
        requirement(
            "RED-001",
            "RED-002",
            "RED-003",
            "RED-005",
            "RED-007",
            "RED-008",
            "CDX-041",
            "CDX-072",
            "RED-006",
            *SITE_REQUIREMENTS.get(row["site"], []),
        )
    ]


@pytest.mark.parametrize(
    "site",
    [
        pytest.param(
            param.values[0]["site"],
            id=param.values[0]["site"],
            marks=[*param.marks, *_site_marks(param.values[0])],
        )
        for param in row_params(_SPEC, "redaction", "canary_sites", where=_planted_via_outcome)
    ],
)
def test_canaries_never_reach_a_text(codex_outcome: Outcome, spec: Spec, site: str) -> None:
    """A canary planted at the site appears in no diagnostic and no reply (in any case), every
    diagnostic is a sentence of the grammar, and decoys spelling categories, fields and whole
    lines in the same places give exactly the same texts."""
    assert site in PLANTERS, f"the suite has no way to plant a canary at Codex site {site!r}"
    hexes = st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)

    # One property per site; a quarter of the profile's examples each keeps the twelve of them
    # within the suite's time budget while every site is still planted on every run.
    @share(4, floor=10)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        template, count = data.draw(planted_runs(spec, site))
        canaries = canary_names(data.draw(st.lists(hexes, min_size=count, max_size=count, unique=True)))
        results, requests = [], []
        for names in (canaries, decoy_names(count)):
            request = instantiate(template, names)
            result = codex_outcome(request)
            requests.append(request)
            results.append({**result, "replies": _without_ids(result["replies"])})
        texts = [results[0].get("diagnostic", ""), json.dumps(results[0]["replies"], ensure_ascii=False)]
        leaked = [c for c in canaries if any(c.lower() in text.lower() for text in texts)]
        if leaked:  # blamed on the rule of each source a canary came from, not on the site
            sources = {path: value for path, value in raw_strings(requests[0]) if any(c in value for c in leaked)}
            blamed = [r for path in sources for r in CHECKS.diagnosis.sources.rules(requests[0], path)]
            raise Violation(
                blamed or ["RED-008"],
                operation="codex_outcome",
                input=requests[0],
                expected=f"no text containing the canaries {leaked!r} (planted at site {site})",
                actual=codex_outcome(requests[0]),
                detail=f"canaries {leaked!r} copied from {', '.join(sources)} into {' / '.join(texts)!r}",
            )
        for request, result in zip(requests, results, strict=True):
            CHECKS.check_grammar(request, result, codex_outcome)
        if results[0] != results[1]:
            raise Violation(
                ["RED-005"],
                operation="codex_outcome",
                input={"with canaries": requests[0], "with decoys": requests[1]},
                expected=results[0],
                actual=results[1],
                detail=f"replacing the canaries at {site} by decoys changed the result",
            )

    check()


@requirement("RED-008")
@pytest.mark.claims("providers", "codex")  # a statement about this tier's inputs: of a claimed provider only
def test_every_codex_canary_site_has_a_planter() -> None:
    """The canary_sites rows are the coverage list: every Codex row planted via codex_outcome is planted."""
    assert sorted(PLANTERS) == sorted(row["site"] for row in CANARY_SITES)
