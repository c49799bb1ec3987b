"""Which requirement a wrong job_outcome, job_output, job_notice or settlement_notice answer
breaks: the diagnosis beside the oracle (conformance/areas/background/oracle.py), so that a
failure is blamed on exactly that rule (conformance.verdict.blame).
"""

from __future__ import annotations

from typing import Any

from conformance.areas.background.oracle import (
    Json,
    expected_job_notice,
    expected_job_text,
    expected_notice,
    expected_outcome,
    job_summary,
    row_requirement,
    status_line_of,
    summary_cuts,
    summary_line,
    tables,
)
from conformance.areas.results.oracle import diagnose_rendering, expected_rendering

# The rendering rules of the diagnostic line (results RES-024, RES-026): what the foreground must
# show of a diagnostic the Job shows (BGD-006).
DIAGNOSTIC_LINE_RULES = frozenset({"RES-024", "RES-026"})


def without_output(request: Json) -> Json | None:
    """The twin of a request whose result is not completed, its output removed: a failed or
    killed Job's presentations must not change (BGD-005). None when there is no such twin."""
    result = request.get("result")
    if result is None or result["stopReason"] == "completed" or not result["output"]:
        return None
    return {**request, "result": {**result, "output": []}}


def outcome_blame(spec: Any, request: Json, actual: Json, *, shows_output: bool) -> list[str]:
    """The requirement a wrong job_outcome answer breaks (call only when it is not accepted);
    ``shows_output`` is whether the answer changes when the result's output is removed."""
    expected = expected_outcome(spec, request)
    if "startFailure" in request:
        if actual.get("status") != expected["status"] or expected["status"] == "killed":
            return ["BGD-007"]
        return ["BGD-008"]
    rule = row_requirement(tables(spec).outcome_row(request["result"]))
    if actual.get("status") != expected["status"] or expected["status"] == "completed":
        return [rule]
    if shows_output or "output" in actual:
        return ["BGD-005"]
    return [_detail_rule(spec, request["result"], actual.get("detail"), rule)]


def _detail_rule(spec: Any, result: Json, detail: Any, rule: str) -> str:
    """A failed Job's detail is wrong: after a correct stop reason and label it is the diagnostic
    part that is wrong, or a label shown without a diagnostic (BGD-006); else the row's rule."""
    head = str(result["stopReason"]) + tables(spec).job["diagnostic_label"]
    return "BGD-006" if isinstance(detail, str) and detail.startswith(head) else rule


def job_text_blame(spec: Any, request: Json, outcome: Json, actual: str, *, shows_output: bool) -> list[str]:
    """The requirement a wrong job_output text breaks, ``outcome`` being the adapter's own
    (accepted) job_outcome answer: the first differing character says which part is wrong."""
    if shows_output:
        return ["BGD-005"]
    expected = expected_job_text(spec, outcome)
    n = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), min(len(expected), len(actual))
    )
    result = request.get("result")
    if result is not None and "diagnostic" in result and "detail" in outcome:
        close = tables(spec).job["status_close"]
        diagnostic_at = len(expected) - len(close) - len(result["diagnostic"])
        if n >= diagnostic_at:
            return ["BGD-006"]  # in the diagnostic, or in what follows it
    return ["BGD-009"]


def job_notice_blame(spec: Any, request: Json, outcome: Json, actual: Json, *, shows_output: bool) -> list[str]:
    """The requirements a wrong job_notice answer breaks, ``outcome`` being the adapter's own
    (accepted) job_outcome answer: the text's first difference (in the diagnostic: BGD-006,
    elsewhere: BGD-017), and a collapsed summary that is not the bound of the rules' line
    (BGD-018), judged against the status line the adapter's own text shows."""
    if shows_output:
        return ["BGD-005"]
    expected = expected_job_notice(spec, request, outcome)
    c = tables(spec).completion
    blamed = []
    if actual["text"] != expected["text"]:
        text, want = actual["text"], expected["text"]
        n = next((i for i, (a, b) in enumerate(zip(want, text, strict=False)) if a != b), min(len(want), len(text)))
        settled = request["settled"].get("result", {})
        tail = len(c["action"]) + len(tables(spec).job["status_close"])
        at = len(want) - tail - len(settled.get("diagnostic", ""))
        blamed.append("BGD-006" if "diagnostic" in settled and "detail" in outcome and n >= at else "BGD-017")
    head = c["job_prefix"] + request["jobId"] + c["kind_open"] + request["label"] + c["kind_close"]
    line = actual["text"][len(head) : len(actual["text"]) - len(c["action"])]
    if not (actual["text"].startswith(head) and actual["text"].endswith(c["action"])):
        line = status_line_of(spec, outcome)
    if actual["summary"] not in summary_cuts(spec, job_summary(spec, request, line)):
        blamed.append("BGD-018")
    return blamed or ["BGD-017"]


def notice_blame(spec: Any, request: Json, actual: Json) -> list[str]:
    """The requirements a wrong settlement_notice answer breaks: its opening summary (BGD-011),
    what follows it (BGD-010), and its collapsed summary, judged against the adapter's own
    opening line so that one wrong summary is not blamed twice (BGD-012)."""
    expected = expected_notice(spec, request)
    content = actual["content"]
    blamed = []
    if content[:1] != expected["content"][:1]:
        blamed.append("BGD-011")
    if content[1:] != expected["content"][1:]:
        blamed.append("BGD-010")
    opening = content[0].get("text") if content and content[0].get("type") == "text" else None
    line = (
        opening if isinstance(opening, str) else summary_line(spec, request["childId"], request["result"]["stopReason"])
    )
    if actual["summary"] not in summary_cuts(spec, line):
        blamed.append("BGD-012")
    return blamed or ["BGD-012"]


def foreground_diagnostic_blame(spec: Any, result: Json, actual: Any) -> list[str] | None:
    """The diagnostic-line rule a wrong foreground tool result ``actual`` of a non-completed
    result with a diagnostic (one the Job shows) breaks, as the results tests diagnose it
    (RES-024, or RES-026 for a mangled diagnostic), so the same rendering is blamed the same way
    in both tiers; None when the rendering is right, or wrong only where the results tests alone
    judge it."""
    expected = expected_rendering(spec, result)
    if actual == expected:
        return None
    blamed = diagnose_rendering(spec, result, expected, actual)
    return blamed if set(blamed) <= DIAGNOSTIC_LINE_RULES else None
