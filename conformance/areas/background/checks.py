"""Holding the background operations' answers to the spec, for conformance/test_background.py:
job_outcome first, then job_output and job_notice held to the adapter's own (accepted) outcome,
since both are built from it (BGD-009, BGD-017); a failure is blamed on the rule the diagnosis
in blame.py names, so one bug is blamed once, on its own requirement, in every test.
"""

from __future__ import annotations

from typing import Any

from conformance.areas.background.blame import (
    foreground_diagnostic_blame,
    job_notice_blame,
    job_text_blame,
    notice_blame,
    outcome_blame,
    without_output,
)
from conformance.areas.background.oracle import (
    accepts_outcome,
    expected_job_notice,
    expected_job_text,
    expected_notice,
    expected_outcome,
    job_notice_accepted,
    summary_cuts,
)
from conformance.areas.results.oracle import expected_rendering
from conformance.harness.adapter import Adapter
from conformance.spec import Spec
from conformance.verdict.blame import Violation, dump
from conformance.verdict.report import NOT_APPLICABLE

Json = dict[str, Any]


def _vector_section(request: Json, outcome: Json, text: str) -> dict[str, str]:
    row = {"name": "…", "description": "…", "covers": ["…"], "input": request, "outcome": outcome, "text": text}
    return {"as a golden vector (spec/background.yaml, table job_vectors)": dump(row)}


def check_outcome(
    adapter: Adapter, spec: Spec, request: Json, expected: Json | None = None, why: dict[str, str] | None = None
) -> Json:
    """The adapter's job_outcome, once it is one a correct implementation may give; else a
    failure blamed on the rule it breaks. ``expected`` overrides the oracle (a vector's value);
    ``why`` adds sections saying where the outcome was asked for."""
    want = expected if expected is not None else expected_outcome(spec, request)
    actual: Json = adapter.call("job_outcome", request)
    if not accepts_outcome(spec, request, actual, want):
        twin = without_output(request)
        shows = twin is not None and adapter.call("job_outcome", twin) != actual
        raise Violation(
            outcome_blame(spec, request, actual, shows_output=shows),
            operation="job_outcome",
            input=request,
            expected=want,
            actual=actual,
            sections={**(why or {}), **_vector_section(request, want, expected_job_text(spec, want))},
        )
    return actual


# The requirements of the Job tests that only these operations' answers show: with the operation
# not claimed (job_outcome claimed alone), a Job test checks the rest and not these.
SHOWN_ONLY_BY = {
    "job_output": ("BGD-009", "BGD-015", "BGD-017"),
    "job_notice": ("BGD-017", "BGD-018", "BGD-019"),
    "render_tool_result": ("RES-024", "RES-026"),
}


def unclaimed_parts(adapter: Adapter) -> dict[str, str]:
    """Each requirement of SHOWN_ONLY_BY whose operation the adapter does not implement, with why."""
    return {
        rid: f"{NOT_APPLICABLE}{adapter.impl} does not implement operation {operation!r}"
        for operation, ids in SHOWN_ONLY_BY.items()
        if not adapter.claims("operations", operation)
        for rid in ids
    }


def check_job(
    adapter: Adapter,
    spec: Spec,
    request: Json,
    expected: Json | None = None,
    label: str = "Observe background",
    job_id: str = "subagent-1",
) -> tuple[Json, str | None]:
    """job_outcome, then job_output and job_notice held to the adapter's own (accepted) outcome.
    ``expected`` overrides the oracle (a vector's value); ``label`` and ``job_id`` name the Job
    in its completion notice."""
    actual = check_outcome(adapter, spec, request, expected)
    if not adapter.claims("operations", "job_output"):
        return actual, None  # job_outcome claimed alone: checked on its own (SHOWN_ONLY_BY says what is not)
    text = adapter.call("job_output", request)["text"]
    shown = expected_job_text(spec, actual)
    if text != shown:
        twin = without_output(request)
        shows = twin is not None and adapter.call("job_output", twin)["text"] != text
        raise Violation(
            job_text_blame(spec, request, actual, text, shows_output=shows),
            operation="job_output",
            input=request,
            expected={"text": shown},
            actual={"text": text},
            sections={"the adapter's job_outcome for the same input": dump(actual)},
        )
    if adapter.claims("operations", "job_notice"):
        check_job_notice(adapter, spec, {"jobId": job_id, "label": label, "settled": request}, actual)
    return actual, text


def check_job_notice(adapter: Adapter, spec: Spec, request: Json, outcome: Json, expected: Json | None = None) -> None:
    """job_notice held to the notice of ``outcome`` (the adapter's own accepted job_outcome)."""
    want = expected if expected is not None else expected_job_notice(spec, request, outcome)
    actual: Json = adapter.call("job_notice", request)
    if actual != want and not job_notice_accepted(spec, request, outcome, want, actual):
        twin_settled = without_output(request["settled"])
        shows = twin_settled is not None and adapter.call("job_notice", {**request, "settled": twin_settled}) != actual
        blamed = job_notice_blame(spec, request, outcome, actual, shows_output=shows)
        raise Violation(
            blamed,
            operation="job_notice",
            input=request,
            expected=want,
            actual=actual,
            sections={"the adapter's job_outcome for the same settled input": dump(outcome)},
        )


def check_job_notice_vector(adapter: Adapter, spec: Spec, request: Json, expected: Json) -> None:
    """A completion vector: a notice equal to the row's (or cut as BGD-018 allows) holds. Any
    other is diagnosed as check_job does: the notice is built from the Job outcome (BGD-017), so
    a wrong job_outcome for the settled input is blamed on job_outcome's own rule, and the notice
    is held to the adapter's own (accepted) outcome, never to the spec's in its place."""
    settled = request["settled"]
    spec_outcome = expected_outcome(spec, settled)
    actual = adapter.call("job_notice", request)
    if actual == expected or job_notice_accepted(spec, request, spec_outcome, expected, actual):
        return
    why = {
        "why here": "this completion vector's notice differs, and a notice is built from the Job outcome (BGD-017)",
        "the adapter's job_notice": dump(actual),
    }
    outcome = check_outcome(adapter, spec, settled, why=why)
    check_job_notice(adapter, spec, request, outcome, expected if outcome == spec_outcome else None)


def check_same_diagnostic_in_the_foreground(adapter: Adapter, spec: Spec, result: Json) -> None:
    """The foreground tool result of the same result shows the same diagnostic the Job shows (the
    Job's side is check_job's), an aborted result's included (BGD-003, results RES-029): a wrong
    diagnostic line is blamed as the results tests blame it; any other difference is theirs."""
    if (
        "diagnostic" not in result
        or result["stopReason"] == "completed"
        or not adapter.claims("operations", "render_tool_result")
    ):
        return  # no diagnostic shown by the Job; a completed result is outside render_tool_result's domain
    actual = adapter.call("render_tool_result", result)
    blamed = foreground_diagnostic_blame(spec, result, actual)
    if blamed is not None:
        raise Violation(
            blamed,
            operation="render_tool_result",
            input=result,
            expected=expected_rendering(spec, result),
            actual=actual,
            sections={"why here": "the Job showed this result's diagnostic verbatim; the foreground must too"},
        )


def _other_cut(spec: Spec, want: Json, actual: Any) -> bool:
    """Whether ``actual`` is ``want`` but for another cut BGD-012 accepts inside a surrogate pair
    (a stop reason outside the vocabulary may hold astral characters)."""
    if not (isinstance(actual, dict) and {**actual, "summary": want["summary"]} == want):
        return False
    return actual["summary"] in summary_cuts(spec, str(want["content"][0]["text"]))


def check_notice(adapter: Adapter, spec: Spec, request: Json, expected: Json | None = None) -> Json:
    want = expected if expected is not None else expected_notice(spec, request)
    actual: Json = adapter.call("settlement_notice", request)
    if actual != want and not _other_cut(spec, want, actual):
        blamed = notice_blame(spec, request, actual)
        raise Violation(blamed, operation="settlement_notice", input=request, expected=want, actual=actual)
    return actual
