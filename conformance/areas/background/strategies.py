"""Strategies for the background operations' inputs, inside their domains: SubagentResults of
one job_outcomes row (results' SubagentResult strategy), labels, ids, notice requests, and the
canaries planted at each output site. Labels are drawn from the whole of Unicode (astral
characters, combining marks, right-to-left text), and ASTRAL_LABELS reach the summary bound
in every run.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from conformance.areas.background.oracle import (
    ODD_STOP_REASONS,
    Json,
    summary_line,
    tables,
    utf16_units,
)
from conformance.areas.diagnostic.oracle import bound
from conformance.areas.results.strategies import (
    UNICODE_DIAGNOSTICS,
    UNICODE_OUTPUT,
    content_blocks,
    diagnostics,
    subagent_results,
)
from conformance.areas.texts import any_text


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
    """Deterministic results of a row with a diagnostic at the bound (CJK, ASCII, or astral,
    combining and right-to-left characters), multi-line, or empty."""
    if not row["diagnostic"]:
        return []
    cut = _bounded(spec)
    stop = ODD_STOP_REASONS[0] if row["stop_reason"] == "unknown" else str(row["stop_reason"])
    output = [{"type": "text", "text": "partial assistant text"}]
    texts = [cut("权限" * 4096), cut("x" * 4096), "line one\nline two\n", "", cut(UNICODE_DIAGNOSTICS[1])]
    return [{"output": output, "stopReason": stop, "diagnostic": d} for d in texts]


#: Labels that leave the Basic Multilingual Plane, with combining marks and right-to-left text,
#: long enough that the summary bound cuts them (BGD-018), in UTF-16 code units: more code units
#: than code points, so a bound counted in code points cuts too late or not at all. A test checks
#: each on a result without a diagnostic, so no other rule's failure can mask the bound's.
ASTRAL_LABELS: tuple[str, ...] = (
    "修复测试 " + "😀" * 56,  # 61 code points, 117 code units: cut in units only, whatever the status line
    "مرحبا 𝓐𝓑𝓒 שלום a\u0301\u0308 " * 5,  # RTL, mathematical letters, combining marks: cut in both, apart
    "𝄞" * 3 + "Observe " + "e\u0301" * 40 + " 🇺🇳" * 10,  # flags: two astral code points each
)

labels = st.one_of(
    st.sampled_from(["Observe Claude background diagnostic", "d", "Summarise the logs", "修复测试", *ASTRAL_LABELS]),
    any_text(max_size=140),
)


def astral_label_cases(row: Json) -> list[tuple[Json, str]]:
    """Deterministic (result, label) pairs of a row without a diagnostic: each of ASTRAL_LABELS
    with a result of the row's stop reason, so that the summary bound (BGD-018) is checked where
    no diagnostic, and so no rule of the detail (BGD-003, BGD-004), can hide it."""
    if row["diagnostic"]:
        return []
    stop = ODD_STOP_REASONS[0] if row["stop_reason"] == "unknown" else str(row["stop_reason"])
    result: Json = {"output": [{"type": "text", "text": "partial assistant text"}], "stopReason": stop}
    return [(result, label) for label in ASTRAL_LABELS]


#: Ids the schema admits (a non-empty printable-ASCII string, BGD-013: Job and session ids are
#: ASCII, so no id leaves the BMP) that a copy by pattern replacement would change: ``$``
#: sequences (JavaScript's String.replace), backslashes and group references (Python's re.sub),
#: braces (a template's own ``{id}``), and one long enough that a notice summary cuts it. Each
#: is checked in every run (HOSTILE_IDS with each row), beside drawn ids.
HOSTILE_IDS: tuple[str, ...] = (
    "subagent-1",
    "$&$'$`$$$1",
    "\\0\\g<0>\\1\\n",
    "{id}{0}%s%d",
    "~!@#^*()_+-=[]|;:'\",.<>/?" + "x" * 140,
)
_PRINTABLE_ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)

job_ids = st.one_of(
    st.sampled_from(["subagent-1", "subagent-2", "subagent-17", *HOSTILE_IDS]),
    st.text(alphabet=_PRINTABLE_ASCII, min_size=1, max_size=64),
)

child_ids = st.one_of(
    st.sampled_from(["child-1", "sess-child", "00000000-0000-4000-8000-000000000017", *HOSTILE_IDS]),
    st.text(alphabet=_PRINTABLE_ASCII, min_size=1, max_size=120),
)


def pair_cut_stop_reason(spec: Any, child_id: str) -> str:
    """A stop reason outside the vocabulary whose notice summary the bound cuts between the two
    units of a surrogate pair (BGD-012 allows three forms there, as BGD-018 does)."""
    head = summary_line(spec, child_id, "")
    head = head[: head.index(tables(spec).notice["abnormal_close"])]
    return "x" * (tables(spec).summary_max - 2 - utf16_units(head)) + "😀" * 8


def hostile_notice_requests(row: Json) -> list[Json]:
    """Deterministic settlement_notice inputs of a notice_summaries row: each of HOSTILE_IDS as the
    child id (copied into the notice and counted by its summary's bound, BGD-011 and BGD-012),
    and for the abnormal arm each of ODD_STOP_REASONS too."""
    output = [{"type": "text", "text": "closing message"}, *copy.deepcopy(list(UNICODE_OUTPUT))]  # copied whole
    if row["stop_reason"] != "unknown":
        stop = str(row["stop_reason"])
        return [{"childId": child, "result": {"output": output, "stopReason": stop}} for child in HOSTILE_IDS]
    # The abnormal arm: every stop reason outside the vocabulary with every id, the long Unicode
    # one (cut by the summary bound, BGD-012, in UTF-16 code units) among them.
    return [
        {"childId": child, "result": {"output": output, "stopReason": stop}}
        for child in HOSTILE_IDS
        for stop in ODD_STOP_REASONS
    ]


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
