"""Strategies, the oracle and the diagnosis for job_outcome, job_output and settlement_notice,
built from spec/background.yaml (and results.py's SubagentResult strategy).

The oracle says what a correct implementation answers; the diagnosis says which requirement's
rule a wrong answer breaks, so that a failure is blamed on exactly that rule (conformance.verdict.blame).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.areas.diagnostic.oracle import bound
from conformance.areas.results.strategies import content_blocks, diagnostics, expected_rendering, subagent_results

Json = dict[str, Any]

AREA = "background"
_ERROR_NAME = r"[A-Za-z_][A-Za-z0-9_]*: "
# Stop reasons outside the contract's five (the union is merge-extensible).
ODD_STOP_REASONS = ["paused", "frobnicated", "", "Completed", "error ", "handoff"]


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


# ---------------------------------------------------------------- the diagnosis


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


def foreground_diagnostic_span(spec: Any, result: Json) -> tuple[str, int, int] | None:
    """The foreground tool result's expected text (results.py) and where in it the diagnostic
    stands (RES-024), for a non-completed result with a diagnostic; None otherwise."""
    if "diagnostic" not in result or result["stopReason"] == "completed":
        return None
    expected: str = expected_rendering(spec, result)["text"]
    fragments = {row["name"]: row["text"] for row in spec.table("results", "render_fragments").rows}
    start = expected.index(fragments["diagnostic_prefix"]) + len(fragments["diagnostic_prefix"])
    return expected, start, start + len(result["diagnostic"])


# ---------------------------------------------------------------- strategies


def _bounded(spec: Any) -> Any:
    return bound(spec).expected


def stop_reasons_of(row: Json) -> st.SearchStrategy[str]:
    if row["stop_reason"] == "unknown":
        return st.sampled_from(ODD_STOP_REASONS)
    return st.just(str(row["stop_reason"]))


def results_of_row(spec: Any, row: Json) -> st.SearchStrategy[Json]:
    """SubagentResults (results.py's strategy) moved into one job_outcomes row: its stop class
    and diagnostic presence, the diagnostic bounded as the shared result boundary bounds it."""
    cut = _bounded(spec)

    def place(base: Json, stop: str, diagnostic: str) -> Json:
        result: Json = {"output": base["output"], "stopReason": stop}
        if row["diagnostic"]:
            result["diagnostic"] = cut(base.get("diagnostic", diagnostic))
        return result

    return st.builds(place, subagent_results(spec), stop_reasons_of(row), diagnostics())


def boundary_results(spec: Any, row: Json) -> list[Json]:
    """Deterministic results of a row with a diagnostic at the bound, multi-line, or empty."""
    if not row["diagnostic"]:
        return []
    cut = _bounded(spec)
    stop = ODD_STOP_REASONS[0] if row["stop_reason"] == "unknown" else str(row["stop_reason"])
    output = [{"type": "text", "text": "partial assistant text"}]
    texts = [cut("权限" * 4096), cut("x" * 4096), "line one\nline two\n", ""]
    return [{"output": output, "stopReason": stop, "diagnostic": d} for d in texts]


labels = st.one_of(
    st.sampled_from(["Observe Claude background diagnostic", "d", "Summarise the logs", "修复测试"]),
    st.text(alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]), max_size=140),
)
job_ids = st.sampled_from(["subagent-1", "subagent-2", "subagent-17"])

child_ids = st.one_of(
    st.sampled_from(["child-1", "sess-child", "00000000-0000-4000-8000-000000000017"]),
    st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=120),
)


def notice_requests(stop_reasons: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    """settlement_notice inputs: a continuable epoch's result (no diagnostic) and a child id."""
    return st.builds(
        lambda child, output, stop: {"childId": child, "result": {"output": output, "stopReason": stop}},
        child_ids,
        content_blocks(),
        stop_reasons,
    )


# ---------------------------------------------------------------- canaries


def canary(n: int) -> str:
    return f"SECRET_TOKEN_{n:04d} /private/secret.txt"


def planted_result(site: str, base: Json) -> tuple[Json, list[str]]:
    """``base`` with canaries planted at an output site of table canary_sites."""
    result = dict(base)
    blocks = list(result["output"])
    if site == "output-text":
        blocks.append({"type": "text", "text": canary(1)})
    elif site == "reasoning-text":
        blocks.append({"type": "reasoning", "text": canary(2)})
    else:
        blocks.append({"type": "tool-call", "id": canary(3), "name": canary(4), "arguments": canary(5)})
    planted = [c for b in blocks[-1:] for k, c in b.items() if k != "type"]
    result["output"] = blocks
    return result, planted
