"""The oracle of job_outcome, job_output, job_notice and settlement_notice, built from
spec/background.yaml: what a correct implementation answers. Which rule a wrong answer breaks
is conformance/areas/background/blame.py; the inputs are drawn by strategies.py beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]

AREA = "background"
_ERROR_NAME = r"[A-Za-z_][A-Za-z0-9_]*: "
# Stop reasons outside the contract's five (the union is merge-extensible).
ODD_STOP_REASONS = ["paused", "frobnicated", "", "Completed", "error ", "handoff", "停止😀 שלום e\u0301" * 8]


# ---------------------------------------------------------------- the spec's data


@dataclass(frozen=True)
class Tables:
    """The background tables, read once per spec."""

    outcomes: list[Json]
    start_failures: list[Json]
    job: dict[str, str]
    completion: dict[str, str]
    summaries: dict[str, str]
    notice: dict[str, str]
    summary_max: int
    rejections: list[Json]

    def outcome_row(self, result: Json) -> Json:
        """The job_outcomes row of a result: its stop class and whether it has a diagnostic."""
        stop = result["stopReason"]
        known = {row["stop_reason"] for row in self.outcomes} - {"unknown"}
        cls = stop if stop in known else "unknown"
        [row] = [r for r in self.outcomes if r["stop_reason"] == cls and r["diagnostic"] == ("diagnostic" in result)]
        return row

    def start_row(self, failure: Json, cancelled: bool) -> Json:
        [row] = [
            r for r in self.start_failures if (r["aggregate"], r["cancelled"]) == (failure["aggregate"], cancelled)
        ]
        return row


_TABLES: dict[int, Tables] = {}


def tables(spec: Any) -> Tables:
    if id(spec) not in _TABLES:

        def rows(name: str) -> list[Json]:
            return list(spec.table(AREA, name).rows)

        _TABLES[id(spec)] = Tables(
            outcomes=rows("job_outcomes"),
            start_failures=rows("start_failures"),
            job={r["name"]: r["text"] for r in rows("job_fragments")},
            completion={r["name"]: r["text"] for r in rows("completion_fragments")},
            summaries={r["stop_reason"]: r["summary"] for r in rows("notice_summaries")},
            notice={r["name"]: r["text"] for r in rows("notice_fragments")},
            summary_max=rows("notice_bound")[0]["max_chars"],
            rejections=rows("start_rejections"),
        )
    return _TABLES[id(spec)]


def row_requirement(row: Json) -> str:
    """The requirement whose rule a job_outcomes row states (its `rule` column)."""
    return str(row["rule"][0])


# ---------------------------------------------------------------- the oracle


def text_of(output: list[Json]) -> str:
    return "".join(b["text"] for b in output if b.get("type") == "text")


def expected_outcome(spec: Any, request: Json) -> Json:
    """The Job outcome; a failed start's detail written as the bare rejection message."""
    t = tables(spec)
    if "startFailure" in request:
        failure = request["startFailure"]
        status = t.start_row(failure, request["cancelled"])["status"]
        return {"status": status, "detail": failure["message"]} if status == "failed" else {"status": status}
    result = request["result"]
    row = t.outcome_row(result)
    outcome: Json = {"status": row["status"]}
    if row["output"]:
        outcome["output"] = text_of(result["output"])
    if row["detail"] != "none":
        outcome["detail"] = str(result["stopReason"])
    if row["detail"] == "stop-reason-and-diagnostic":
        outcome["detail"] += t.job["diagnostic_label"] + result["diagnostic"]
    return outcome


def accepts_outcome(spec: Any, request: Json, actual: Json, expected: Json | None = None) -> bool:
    """Whether an answer is one a correct implementation may give: ``expected`` (by default
    the oracle's), or for a failed start its detail preceded by an error name (BGD-008)."""
    expected = expected if expected is not None else expected_outcome(spec, request)
    if actual == expected:
        return True
    if "startFailure" not in request or expected["status"] != "failed" or set(actual) != {"status", "detail"}:
        return False
    pattern = _ERROR_NAME + re.escape(request["startFailure"]["message"])
    return actual["status"] == "failed" and re.fullmatch(pattern, actual["detail"]) is not None


def expected_job_text(spec: Any, outcome: Json) -> str:
    """job_output's text for a Job outcome (BGD-009)."""
    f = tables(spec).job
    body: str = outcome.get("output") or f["no_output"]
    return body + ("" if body.endswith(f["line_break"]) else f["line_break"]) + status_line_of(spec, outcome)


def status_line_of(spec: Any, outcome: Json) -> str:
    f = tables(spec).job
    detail = f["detail_separator"] + outcome["detail"] if "detail" in outcome else ""
    return f["status_open"] + str(outcome["status"]) + detail + f["status_close"]


def expected_job_notice(spec: Any, request: Json, outcome: Json) -> Json:
    """The completion notice of a Job that settled to ``outcome`` (BGD-017, BGD-018)."""
    c = tables(spec).completion
    line = status_line_of(spec, outcome)
    text = c["job_prefix"] + request["jobId"] + c["kind_open"] + request["label"] + c["kind_close"] + line + c["action"]
    return {"text": text, "summary": bounded_summary(spec, job_summary(spec, request, line))}


def job_summary(spec: Any, request: Json, line: str) -> str:
    """The collapsed summary of a completion notice before its bound: kind, label, status line."""
    c = tables(spec).completion
    return c["summary_kind"] + c["summary_separator"] + str(request["label"]) + c["summary_separator"] + line


def job_notice_accepted(spec: Any, request: Json, outcome: Json, want: Json, actual: Any) -> bool:
    """Whether ``actual`` is ``want`` but for a summary cut another way BGD-018 allows."""
    return (
        isinstance(actual, dict)
        and actual.keys() == want.keys()
        and actual["text"] == want["text"]
        and actual["summary"] in summary_cuts(spec, job_summary(spec, request, status_line_of(spec, outcome)))
    )


def summary_line(spec: Any, child_id: str, stop_reason: str) -> str:
    t = tables(spec)
    template = t.summaries.get(stop_reason)
    if template is None:
        template = t.notice["abnormal_open"] + stop_reason + t.notice["abnormal_close"]
    return template.replace("{id}", child_id)


def utf16_units(text: str) -> int:
    """The length of ``text`` as upstream's strings count it: UTF-16 code units (BGD-012, BGD-018)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def summary_cuts(spec: Any, summary: str) -> list[str]:
    """Every collapsed summary BGD-012 and BGD-018 accept for ``summary``: itself within
    ``max_chars`` UTF-16 code units; else its first ``max_chars`` - 1 units and the ellipsis. Where
    that cut splits a surrogate pair, the pair's high surrogate may stand alone (upstream's
    String.slice), be left out, or be U+FFFD (what a UTF-8 encoder writes for it); the first
    of these is the one a transport that carries only Unicode text can always send."""
    t = tables(spec)
    units = summary.encode("utf-16-le", "surrogatepass")
    if len(units) // 2 <= t.summary_max:
        return [summary]
    kept = units[: 2 * (t.summary_max - 1)].decode("utf-16-le", "surrogatepass")
    ellipsis = t.notice["summary_ellipsis"]
    if kept and "\ud800" <= kept[-1] <= "\udbff":
        whole = kept[:-1]
        return [whole + ellipsis, kept + ellipsis, whole + "\ufffd" + ellipsis]
    return [kept + ellipsis]


def bounded_summary(spec: Any, summary: str) -> str:
    """The collapsed summary the spec shows for ``summary`` (the first of :func:`summary_cuts`)."""
    return summary_cuts(spec, summary)[0]


def expected_notice(spec: Any, request: Json) -> Json:
    t = tables(spec)
    result = request["result"]
    summary = summary_line(spec, request["childId"], result["stopReason"])
    content: list[Json] = [{"type": "text", "text": summary}]
    if result["output"]:
        content += [{"type": "text", "text": t.notice["closing_message"]}, *result["output"]]
    else:
        content.append({"type": "text", "text": t.notice["no_closing_message"]})
    return {"content": content, "summary": bounded_summary(spec, summary)}
