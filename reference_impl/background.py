"""Background delivery: a one-shot Job's outcome and job_output read, and a continuable child's
settlement notice, each built from the same SubagentResult the foreground tool renders.

Written as a harness's Job producer, job tool and continuation manager would write them: the
diagnostic is copied, never parsed, re-bounded or re-formatted, and a Job that did not
complete never carries the child's partial output.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

_SUMMARY_MAX_CHARS = 120  # the bound of every collapsed notice row


def _final_text(output: list[Json]) -> str:
    return "".join(block["text"] for block in output if block.get("type") == "text")


def _failure_detail(result: Json) -> str:
    if "diagnostic" not in result:
        return str(result["stopReason"])
    return f"{result['stopReason']}; diagnostic: {result['diagnostic']}"


def _result_outcome(result: Json) -> Json:
    stop_reason = result["stopReason"]
    if stop_reason == "completed":
        return {"status": "completed", "output": _final_text(result["output"])}
    if stop_reason == "aborted" and "diagnostic" not in result:
        return {"status": "killed"}  # a local cancellation: the Job's own kill
    # A diagnosed abort, every other reason and any merge-extensible one: failed, no partial output.
    return {"status": "failed", "detail": _failure_detail(result)}


def _start_failure_outcome(failure: Json, cancelled: bool) -> Json:
    # A failed rollback is reported even when the Job was cancelled: never a clean kill.
    if cancelled and not failure["aggregate"]:
        return {"status": "killed"}
    name = "AggregateError" if failure["aggregate"] else "Error"
    return {"status": "failed", "detail": f"{name}: {failure['message']}"}


def job_outcome(request: Json) -> Json:
    """The JobOutcome the one-shot background producer reports."""
    if "result" in request:
        return _result_outcome(request["result"])
    return _start_failure_outcome(request["startFailure"], request["cancelled"])


def status_line(outcome: Json) -> str:
    if "detail" in outcome:
        return f"[status: {outcome['status']}, {outcome['detail']}]"
    return f"[status: {outcome['status']}]"


def render_job_output(outcome: Json) -> str:
    """The job_output text of a settled Job, from its outcome."""
    body = outcome.get("output") or "(no new output)"
    separator = "" if body.endswith("\n") else "\n"
    return body + separator + status_line(outcome)


def job_output(request: Json) -> Json:
    return {"text": render_job_output(job_outcome(request))}


def job_notice(request: Json) -> Json:
    """The completion notice the Job runtime sends the owner of a settled subagent Job."""
    return render_job_notice(request, job_outcome(request["settled"]))


def render_job_notice(request: Json, outcome: Json) -> Json:
    line = status_line(outcome)
    text = f"background job {request['jobId']} (subagent: {request['label']}) finished {line}."
    return {
        "text": text + " Read its output with job_output.",
        "summary": _bound_summary(f"subagent {request['label']} {line}"),
    }


def _summary(child_id: str, stop_reason: str) -> str:
    subject = f"Background subagent {child_id}"
    endings = {
        "completed": "finished and will do no further work unless you send it more.",
        "aborted": "was stopped before it finished.",
        "max-tokens": "ran out of room before it finished.",
        "refusal": "declined the task.",
        "error": "failed before it finished.",
    }
    ending = endings.get(stop_reason, f"ended abnormally ({stop_reason}) before it finished.")
    return f"{subject} {ending}"


def _bound_summary(summary: str) -> str:
    """Upstream counts UTF-16 code units; a pair the cut would split is left out whole, since a
    lone surrogate is not text a UTF-8 transport can carry."""
    units = summary.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * _SUMMARY_MAX_CHARS:
        return summary
    kept = units[: 2 * (_SUMMARY_MAX_CHARS - 1)].decode("utf-16-le", "surrogatepass")
    if "\ud800" <= kept[-1] <= "\udbff":
        kept = kept[:-1]
    return kept + "…"


def settlement_notice(request: Json) -> Json:
    """The notice a continuable child's settled epoch sends its parent."""
    result = request["result"]
    summary = _summary(request["childId"], result["stopReason"])
    content: list[Json] = [{"type": "text", "text": summary}]
    if result["output"]:
        content += [{"type": "text", "text": "Its closing message:"}, *result["output"]]
    else:
        content.append({"type": "text", "text": "It left no closing message."})
    return {"content": content, "summary": _bound_summary(summary)}
