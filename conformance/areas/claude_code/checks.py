"""Holding a claude_code_outcome answer to the spec, shared by the Claude Code tiers' test
modules: the oracle's result (conformance.areas.claude_code.oracle), the rules a difference
breaks (conformance.areas.claude_code.blame) and the run-result grammar of diagnostic.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.areas.claude_code.blame import ClaudeDiagnosis
from conformance.areas.claude_code.oracle import PRODUCT, expected_outcome
from conformance.areas.diagnostic.grammar import Matcher, roots
from conformance.areas.diagnostic.text_blame import as_vector
from conformance.harness.adapter import Adapter
from conformance.spec import Spec
from conformance.verdict.blame import Violation

Json = dict[str, Any]

_MATCHERS: dict[int, Matcher] = {}


def run_result_grammar(spec: Spec) -> Matcher:
    """The compiled run-result root, once per spec (compiling the grammar is the slow part)."""
    if id(spec) not in _MATCHERS:
        _MATCHERS[id(spec)] = roots(spec)[(PRODUCT, "run-result")]
    return _MATCHERS[id(spec)]


_DIAGNOSIS: dict[int, ClaudeDiagnosis] = {}


def diagnosis(spec: Spec) -> ClaudeDiagnosis:
    """The diagnosis of ``spec``, built once per spec."""
    if id(spec) not in _DIAGNOSIS:
        _DIAGNOSIS[id(spec)] = ClaudeDiagnosis(spec)
    return _DIAGNOSIS[id(spec)]


def judge(
    spec: Spec,
    scenario: Json,
    expected: Json,
    actual: Json,
    *,
    found: bool = True,
    outcome: Callable[[Json], Json] | None = None,
) -> None:
    """Raise a Violation of exactly the rules that tell ``actual`` from ``expected``
    (claude_code_blame), with the failing example as a paste-ready vector. ``outcome``, the
    adapter's claude_code_outcome, lets the diagnosis confirm where a copied text came from."""
    if actual == expected:
        return
    blamed = diagnosis(spec).diagnose(scenario, expected, actual, outcome)
    row = {"name": "found-by-property", "covers": blamed, "scenario": scenario, "expected": expected}
    raise Violation(
        blamed,
        operation="claude_code_outcome",
        input=scenario,
        expected=expected,
        actual=actual,
        sections=as_vector("spec/claude-code.yaml outcome_vectors", row) if found else None,
    )


def outcome(adapter: Adapter) -> Callable[[Json], Json]:
    """The adapter's claude_code_outcome as a function of its input."""
    return lambda scenario: adapter.call("claude_code_outcome", scenario)


def check_answer(adapter: Adapter, spec: Spec, scenario: Json) -> Json:
    """Call the adapter and hold its answer to the oracle and to the grammar."""
    actual: Json = adapter.call("claude_code_outcome", scenario)
    judge(spec, scenario, expected_outcome(spec, scenario), actual, outcome=outcome(adapter))
    if "diagnostic" in actual and not run_result_grammar(spec).matches(actual["diagnostic"]):
        raise Violation(
            ["RED-002"],
            operation="claude_code_outcome",
            input=scenario,
            expected="a diagnostic that is a sentence of the Claude Code run-result grammar",
            actual=actual,
        )
    return actual
