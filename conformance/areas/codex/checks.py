"""Holding a codex_outcome answer to the spec, shared by the Codex tiers' test modules: the
oracle's result (conformance.areas.codex.oracle), the rules a difference breaks
(conformance.areas.codex.blame) and the Codex run-result grammar of diagnostic.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from conformance.areas.codex.blame import (
    CodexDiagnosis,
    comparable,
    foreign_line_rule,
    ignored_notification_rule,
    unread_detail_rule,
)
from conformance.areas.codex.oracle import CodexOracle
from conformance.areas.codex.scenarios import failed_turn, response, scenario, terminal, turn_error
from conformance.areas.codex.stderr_blame import split_stderr_rule
from conformance.areas.diagnostic.grammar import Matcher, roots
from conformance.areas.diagnostic.text_blame import as_vector, misstaged
from conformance.spec import Spec
from conformance.verdict.blame import Violation

Json = dict[str, Any]
Outcome = Callable[[Json], Json]  # codex_outcome of the adapter under test


class CodexChecks:
    """The oracle, the diagnosis and the run-result grammar of one spec, and the checks made of them."""

    def __init__(self, spec: Spec) -> None:
        self.oracle = CodexOracle(spec)
        self.diagnosis = CodexDiagnosis(spec)
        self.run_result: Matcher = roots(spec)[(self.oracle.product, "run-result")]
        self.other_variants = _other_ranges_variants(spec)
        self.spec = spec

    def check(self, outcome: Outcome, request: Json, expected: Json, *, found: bool = False) -> None:
        """Raise a Violation of exactly the rules that tell the answer from the spec's result
        (codex_blame), and of RED-002 for a diagnostic outside the grammar. ``found``: the
        example was found by a property, so the violation carries it as a paste-ready vector."""
        answer = outcome(request)
        actual = comparable(answer)
        if actual != expected:
            blamed = (  # an ignored part of the scenario that makes the difference, else the rule of each field
                ignored_notification_rule(outcome, request, expected)
                or split_stderr_rule(outcome, request, expected, self.oracle.signatures)
                or foreign_line_rule(outcome, request, expected, "".join(self.oracle.whitespace))
                or unread_detail_rule(outcome, request, expected, self.diagnosis)
                or self.diagnosis.diagnose(request, expected, actual, outcome)
            )
            raise Violation(
                blamed,
                operation="codex_outcome",
                input=request,
                expected=expected,
                actual=answer,
                sections=_as_vector(request, expected, blamed) if found else None,
            )
        self.check_grammar(request, answer, outcome)

    def check_stage(self, outcome: Outcome, request: Json, stage: str, categories: list[str]) -> None:
        """CDX-010: the answer's failure line names ``stage`` with one of ``categories`` (its row of
        table stages). Only that is judged here: an answer without a failure line, or the line's
        other fields, are the other checks' to blame."""
        answer = outcome(request)
        if (found := misstaged(str(answer.get("diagnostic", "")), stage, categories)) is not None:
            raise Violation(
                ["CDX-010"],
                operation="codex_outcome",
                input=request,
                expected=f"a failure line of stage {stage} with one of the categories {', '.join(categories)}",
                actual=answer,
                detail=f"the failure line names stage {found[0]!r} and category {found[1]!r}",
            )

    def check_grammar(self, request: Json, answer: Json, outcome: Outcome | None = None) -> None:
        """RED-002: a diagnostic is a sentence of the Codex run-result grammar; one that is not
        because it copies a raw field of the scenario breaks that field's rule instead (sources.py,
        confirmed with ``outcome`` when given)."""
        if "diagnostic" in answer and not self.run_result.matches(answer["diagnostic"]):
            self.diagnosis.outcome = outcome
            copied = self.diagnosis.leak_rules(request, {}, answer["diagnostic"]) or self.other_range_rule(
                answer["diagnostic"]
            )
            raise Violation(
                copied or ["RED-002"],
                operation="codex_outcome",
                input=request,
                expected="a diagnostic that is a sentence of the Codex run-result grammar",
                actual=answer,
            )

    def version_hint(self, outcome: Outcome) -> str:
        """Advice, never a verdict: when every string member the claimed release's union has over
        the base's comes back unknown, the adapter's mapping likely does not know that release
        (a table written for the base, or keyed by releases that lack it). Empty otherwise."""
        area = self.spec.areas["codex"]
        base = area.base_area or area
        added = [
            str(v)
            for v in area.vocabularies["variant_string"].values
            if v not in base.vocabularies["variant_string"].values
        ]
        if not added:
            return ""
        for member in added:
            answer = outcome(scenario([response(), terminal(failed_turn(turn_error(member)))]))
            if "category: unknown" not in str(answer.get("diagnostic", "")):
                return ""
        return (
            f"the adapter's mapping may not know codex {area.version}: every member its union adds over "
            f"{base.version} ({', '.join(added)}) came back unknown, as a mapping of {base.version} only would "
            "answer; map the claimed release's union (its range's `releases` in spec/codex.yaml)"
        )

    def other_range_rule(self, diagnostic: str) -> list[str]:
        """CDX-008 when the diagnostic is a sentence of the grammar but for its category, a variant
        of another covered range's union kept outside the claimed one's: a mapping of the wrong
        release, not a leak (a variant name is no product text)."""
        match = _CATEGORY.search(diagnostic)
        if match is None or match.group(1) not in self.other_variants:
            return []
        as_unknown = diagnostic[: match.start(1)] + "unknown" + diagnostic[match.end(1) :]
        return ["CDX-008"] if self.run_result.matches(as_unknown) else []


_CATEGORY = re.compile(r"; category: ([A-Za-z]+)[;)]")


def _other_ranges_variants(spec: Spec) -> frozenset[str]:
    """The variants some covered range's union has and the release ``spec`` stands at does not."""
    area = spec.areas["codex"]
    every = {str(v) for v in (area.base_area or area).vocabularies["variant"].values}
    every |= {str(m) for entry in area.versions for m in entry.union.get("adds", ())}
    return frozenset(every - {str(v) for v in area.vocabularies["variant"].values})


_CHECKS: dict[int, tuple[Spec, CodexChecks]] = {}  # by id, with the spec itself: an id is not reused while held


def codex_checks(spec: Spec) -> CodexChecks:
    """The checks of ``spec``, built once per spec (compiling the grammar is the slow part)."""
    cached = _CHECKS.get(id(spec))
    if cached is None or cached[0] is not spec:
        cached = _CHECKS[id(spec)] = (spec, CodexChecks(spec))
    return cached[1]


def _as_vector(request: Json, expected: Json, covers: list[str]) -> dict[str, str]:
    row = {"name": "found-by-property", "covers": covers, "scenario": request, "expected": expected}
    return as_vector("spec/codex.yaml outcome_vectors", row)


def failed_run(*events: Json, variant: str = "other", mode: str = "never") -> Json:
    """A committed run that observes ``events`` and then fails with a string variant."""
    return scenario([response(), *events, terminal(failed_turn(turn_error(variant)))], mode=mode)
