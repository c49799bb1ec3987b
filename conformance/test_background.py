"""Tier 2, background delivery: job_outcome, job_output and settlement_notice against the golden
vectors, the job_outcomes / start_failures / notice_summaries tables, and the canary sites.

Expected values come from the spec (a vector, or the oracle of conformance.areas.background.oracle
built from the background tables); the checks of conformance.areas.background.checks hold
job_output and job_notice to the adapter's own job_outcome, and a failure is blamed by the
diagnosis next to the oracle. Every test is not applicable to an adapter whose declaration does
not claim the background mode it needs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.background.checks import (
    check_job,
    check_job_notice_vector,
    check_notice,
    check_same_diagnostic_in_the_foreground,
    unclaimed_parts,
)
from conformance.areas.background.oracle import row_requirement, tables
from conformance.areas.background.strategies import (
    HOSTILE_IDS,
    astral_label_cases,
    boundary_results,
    hostile_notice_requests,
    job_ids,
    labels,
    notice_requests,
    pair_cut_stop_reason,
    planted_result,
    results_of_row,
    stop_reasons_of,
)
from conformance.areas.results.strategies import UNICODE_OUTPUT
from conformance.areas.texts import any_text
from conformance.harness.adapter import Adapter
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation, dump, golden_vector
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"job_notice", "job_outcome", "job_output", "render_tool_result", "settlement_notice"})

Claim = Callable[[str, str], None]
Unchecked = Callable[[Iterable[str], str], None]  # the unchecked fixture (conformance/conftest.py)
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = load_spec()
_AREA = "background"


def _reaches_all(table: str) -> pytest.MarkDecorator:
    return pytest.mark.reaches(f"{_AREA}.{table}", *range(len(_SPEC.table(_AREA, table).rows)))


def _jobs(claim: Claim, unchecked: Unchecked | None = None, adapter: Adapter | None = None) -> None:
    """Go on only for a claimed Job mode; a test of job_outcome claimed without job_output or
    job_notice checks job_outcome alone, and says which of its requirements it did not check."""
    claim("background", "job")
    if unchecked is not None and adapter is not None:
        for rid, why in unclaimed_parts(adapter).items():
            unchecked([rid], why)


def _notices(claim: Claim) -> None:
    claim("background", "notice")


# ---------------------------------------------------------------- golden vectors


@pytest.mark.parametrize(
    "vector", row_params(_SPEC, _AREA, "job_vectors", marks=lambda v: [requirement("BGD-015", *v["covers"])])
)
def test_job_vector(adapter: Adapter, claim: Claim, spec: Spec, vector: Json, unchecked: Unchecked) -> None:
    _jobs(claim, unchecked, adapter)
    with golden_vector(spec, _AREA, "job_vectors", vector, operations=("job_outcome", "job_output")):
        check_job(adapter, spec, vector["input"], vector["outcome"])


# Every completion vector's text and summary use all six completion fragments.
@_reaches_all("completion_fragments")
@pytest.mark.parametrize(
    "vector", row_params(_SPEC, _AREA, "completion_vectors", marks=lambda v: [requirement("BGD-019", *v["covers"])])
)
def test_job_notice_vector(adapter: Adapter, claim: Claim, spec: Spec, vector: Json) -> None:
    _jobs(claim)
    # A completion vector fails when its notice differs; job_outcome is then asked why (BGD-017),
    # and a wrong outcome found there is a failed vector too.
    with golden_vector(spec, _AREA, "completion_vectors", vector, operations=("job_notice", "job_outcome")):
        check_job_notice_vector(adapter, spec, vector["input"], vector["expected"])


# The notice vectors exercise every notice fragment (abnormal-stop-reason: abnormal_open and
# abnormal_close; upstream-finished-with-answer: closing_message; upstream-declined-without-message:
# no_closing_message; long-child-id-bounds-summary: summary_ellipsis and the notice_bound row).
@_reaches_all("notice_fragments")
@_reaches_all("notice_bound")
@pytest.mark.parametrize(
    "vector", row_params(_SPEC, _AREA, "notice_vectors", marks=lambda v: [requirement("BGD-016", *v["covers"])])
)
def test_notice_vector(adapter: Adapter, claim: Claim, spec: Spec, vector: Json) -> None:
    _notices(claim)
    with golden_vector(spec, _AREA, "notice_vectors", vector, operations=("settlement_notice",)):
        check_notice(adapter, spec, vector["input"], vector["expected"])


# ---------------------------------------------------------------- the Job outcome, stratified by row


_OUTCOME_ROWS = len(_SPEC.table(_AREA, "job_outcomes").rows)


# Every example renders the status line (status_open, status_close, line_break); the rows with a
# diagnostic exercise diagnostic_label and detail_separator, the rows without output no_output.
# The notice's summary is cut at notice_bound in every row (the long one of HOSTILE_IDS), and
# with astral labels where no diagnostic can hide the bound (BGD-018).
@_reaches_all("job_fragments")
@_reaches_all("notice_bound")
@requirement("BGD-005", "BGD-006", "BGD-009", "BGD-013", "BGD-017", "BGD-018", "RES-024", "RES-026")
@pytest.mark.parametrize(
    "row", row_params(_SPEC, _AREA, "job_outcomes", marks=lambda r: [requirement(row_requirement(r))])
)
def test_job_outcome_of_any_result(adapter: Adapter, claim: Claim, spec: Spec, row: Json, unchecked: Unchecked) -> None:
    """Any SubagentResult of this row (results.py's strategy, its diagnostic bounded as settle_run
    bounds it), in both dispatch modes: the Job and the foreground tool result show the same
    diagnostic byte for byte, apart from the output, and a Job that did not complete shows no
    output at all."""
    _jobs(claim, unchecked, adapter)
    for result in boundary_results(spec, row):
        check_job(adapter, spec, {"result": result})
        check_same_diagnostic_in_the_foreground(adapter, spec, result)
    for result, label in astral_label_cases(row):  # BGD-018 on its own: astral labels, no diagnostic
        check_job(adapter, spec, {"result": result}, label=label)
    fixed = [*boundary_results(spec, row), *(result for result, _ in astral_label_cases(row))]
    for job_id in HOSTILE_IDS:  # ids a copy by pattern replacement changes, every run (BGD-017)
        check_job(adapter, spec, {"result": fixed[0]}, job_id=job_id)
    check_job(adapter, spec, {"result": {**fixed[0], "output": list(UNICODE_OUTPUT)}})  # all of Unicode, whole blocks

    @share(_OUTCOME_ROWS)
    @given(result=results_of_row(spec, row), label=labels, job_id=job_ids)
    def check(result: Json, label: str, job_id: str) -> None:
        check_job(adapter, spec, {"result": result}, label=label, job_id=job_id)
        check_same_diagnostic_in_the_foreground(adapter, spec, result)

    check()


def _start_params() -> list[Any]:
    t = tables(_SPEC)
    out = []
    for index, rejection in enumerate(t.rejections):
        for cancelled in (False, True):
            at = t.start_failures.index(t.start_row(rejection, cancelled))
            marks = [
                pytest.mark.reaches(f"{_AREA}.start_rejections", index),
                pytest.mark.reaches(f"{_AREA}.start_failures", at),
            ]
            name = f"rejection{index}-{'cancelled' if cancelled else 'running'}"
            out.append(pytest.param(rejection, cancelled, id=name, marks=marks))
    return out


_START_PARAMS = _start_params()


@requirement("BGD-007", "BGD-008", "BGD-009", "BGD-013", "BGD-017")
@pytest.mark.parametrize(("rejection", "cancelled"), _START_PARAMS)
def test_job_of_a_failed_start(
    adapter: Adapter, claim: Claim, spec: Spec, rejection: Json, cancelled: bool, unchecked: Unchecked
) -> None:
    """A failed start is killed only when cancelled and not an aggregate; its detail is the
    rejection message (an error name before it allowed), whatever raw cause it carries."""
    _jobs(claim, unchecked, adapter)

    @share(len(_START_PARAMS))
    @given(cause=st.one_of(st.none(), any_text(max_size=30), st.just("AggregateError: SECRET_TOKEN wait failure")))
    def check(cause: str | None) -> None:
        failure: Json = {"message": rejection["message"], "aggregate": rejection["aggregate"]}
        if cause is not None:
            failure["cause"] = cause
        check_job(adapter, spec, {"startFailure": failure, "cancelled": cancelled})

    check()


# ---------------------------------------------------------------- the settlement notice, stratified


def _summary_params() -> list[Any]:
    rows = row_params(_SPEC, _AREA, "notice_summaries")
    return [*rows, pytest.param({"stop_reason": "unknown"}, id="abnormal")]


_SUMMARY_PARAMS = _summary_params()


@requirement("BGD-010", "BGD-011", "BGD-012", "BGD-013")
@pytest.mark.parametrize("row", _SUMMARY_PARAMS)
def test_notice_of_any_epoch(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """Any continuable epoch's result of this stop reason, with and without a closing message."""
    _notices(claim)
    for request in hostile_notice_requests(row):  # child ids a copy by pattern replacement changes
        check_notice(adapter, spec, request)
    if row["stop_reason"] == "unknown":  # the summary bound cuts inside a surrogate pair
        output = [{"type": "text", "text": "closing message"}]
        stop = pair_cut_stop_reason(spec, "child-1")
        check_notice(adapter, spec, {"childId": "child-1", "result": {"output": output, "stopReason": stop}})

    @share(len(_SUMMARY_PARAMS))
    @given(request=notice_requests(stop_reasons_of(row)))
    def check(request: Json) -> None:
        check_notice(adapter, spec, request)
        check_notice(adapter, spec, {**request, "result": {**request["result"], "output": []}})

    check()


# ---------------------------------------------------------------- canaries


def _presented(answers: dict[str, Any], presentations: list[str]) -> dict[str, str]:
    return {p: dump(answers[p]) for p in presentations if p in answers}


def _leaks(row: Json, answers: dict[str, Any], canaries: list[str], request: Json, operation: str) -> None:
    for presentation, shown in _presented(answers, row["absent_from"]).items():
        found = [c for c in canaries if c in shown or json.dumps(c)[1:-1] in shown]
        if found:
            raise Violation(
                row["breaks"],
                operation=operation,
                input=request,
                expected=f"none of {found} in the {presentation}",
                actual=answers[presentation],
                detail=f"canary {found[0]!r} planted at {row['site']} reached the {presentation}",
            )


def _job_leaks(adapter: Adapter, row: Json, request: Json, canaries: list[str]) -> None:
    """Each Job presentation of ``request`` the adapter implements, held to the canary row."""
    answers: dict[str, Any] = {"job-outcome": adapter.call("job_outcome", request)}
    _leaks(row, answers, canaries, request, "job_outcome")
    if adapter.claims("operations", "job_output"):
        answers["job-output"] = adapter.call("job_output", request)["text"]
        _leaks(row, answers, canaries, request, "job_output")
    if adapter.claims("operations", "job_notice"):
        notice_request = {"jobId": "subagent-1", "label": "d", "settled": request}
        answers["job-notice"] = adapter.call("job_notice", notice_request)
        _leaks(row, answers, canaries, notice_request, "job_notice")


def _canary_params(where: Callable[[Json], bool]) -> list[Any]:
    return row_params(_SPEC, _AREA, "canary_sites", where=where, marks=lambda r: [requirement("BGD-014", *r["breaks"])])


_NOT_COMPLETED = [r for r in _SPEC.table(_AREA, "job_outcomes").rows if r["status"] != "completed"]


@pytest.mark.parametrize(
    "row",
    _canary_params(lambda r: r["site"] != "start-failure-cause" and "job-outcome" in r["absent_from"]),
)
def test_job_hides_output_canaries(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """Assistant output planted in a result that did not complete reaches no Job presentation."""
    _jobs(claim)

    @share(12)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        outcome_row = data.draw(st.sampled_from(_NOT_COMPLETED))
        result, canaries = planted_result(row["site"], data.draw(results_of_row(spec, outcome_row)))
        request = {"result": result}
        _job_leaks(adapter, row, request, canaries)

    check()


@pytest.mark.parametrize("row", _canary_params(lambda r: r["site"] == "start-failure-cause"))
def test_job_hides_a_start_failure_cause(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """The raw cause a failed start keeps reaches neither the Job's detail nor job_output."""
    _jobs(claim)
    canaries = ["SECRET_TOKEN_0006 /private/secret.txt", "spawn /sdk/claude EACCES SECRET_TOKEN_0007"]

    @share(12)
    @given(rejection=st.sampled_from(tables(spec).rejections), cancelled=st.booleans(), cause=st.sampled_from(canaries))
    def check(rejection: Json, cancelled: bool, cause: str) -> None:
        failure = {"message": rejection["message"], "aggregate": rejection["aggregate"], "cause": cause}
        request = {"startFailure": failure, "cancelled": cancelled}
        _job_leaks(adapter, row, request, [cause])

    check()


@pytest.mark.parametrize("row", _canary_params(lambda r: "notice-summary" in r["absent_from"]))
def test_notice_summary_hides_output_canaries(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """A notice's collapsed summary never shows the closing message it summarises."""
    _notices(claim)
    stops = st.sampled_from([*tables(spec).summaries, "paused"])

    @share(12)
    @given(request=notice_requests(stops))
    def check(request: Json) -> None:
        result, canaries = planted_result(row["site"], request["result"])
        planted = {**request, "result": result}
        notice = adapter.call("settlement_notice", planted)
        _leaks(row, {"notice-summary": notice["summary"]}, canaries, planted, "settlement_notice")

    check()
