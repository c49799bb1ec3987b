"""The spec's answer for settle_run and render_tool_result, and the diagnosis of a wrong one.

Expected values are assembled from spec/results.yaml's tables. A wrong answer is compared
field by field, and each field names the requirement its rule comes from: the stop reason the
table cell's requirement (found in the spec by the column or row it decides), the output
RES-001/002/003 (or the path's own rule), the end event RES-004/005/006/008, the diagnostic
the path's rule (RES-009/014/015/016/017, or DIA-021 when a diagnostic past the bound is
returned unbounded). A failure prints its case as a paste-ready row of settle_vectors or
render_vectors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conformance.areas.selection.blame import diagnose, first_fold_difference
from conformance.areas.selection.oracle import SelectionOracle, oracle_values
from conformance.spec import Spec
from conformance.verdict.blame import Violation, difference, pasteable_row, utf8_size

Json = dict[str, Any]
RESULT_KEYS = ("output", "stopReason", "diagnostic")
_LIMIT = 4096


def turn_end_kind(spec: Spec, turn_end: str | None) -> str:
    """The row of the stop-reason tables a settle_run ``turnEnd`` selects."""
    if turn_end is None:
        return "none"
    return turn_end if turn_end in spec.vocabulary("results.turn_end_kind").values else "unknown"


def column_requirement(spec: Spec, table: str, column: str) -> str:
    """The requirement of ``table`` whose text says it reads ``column`` (RES-010 reads column
    `recorded` of table one_shot_stop_reasons, …)."""
    found = [
        rid
        for rid in spec.table("results", table).requirements
        if f"column `{column}` of table `{table}`" in " ".join(spec.requirement(rid).text.split())
    ]
    [rid] = found
    return rid


def _path(spec: Spec, request: Json) -> tuple[str, Json | None, str]:
    """(table, row, column-or-requirement) of the settlement rule that decides ``request``."""
    if request["driver"] == "out-of-process":
        attempt = request["attempt"]
        [row] = [
            r
            for r in spec.table("results", "out_of_process_settlement").rows
            if r["attempt"] == attempt["outcome"] and r["cancelled"] == request["cancelled"]
        ]
        return "out_of_process_settlement", row, str(row["requirement"][0])
    kind = turn_end_kind(spec, request.get("turnEnd"))
    if request["shape"] == "continuable":
        if request["teardownFailed"]:
            return "continuable_stop_reasons", None, "RES-014"
        [row] = [r for r in spec.table("results", "continuable_stop_reasons").rows if r["turn_end"] == kind]
        column = "dropped" if request["droppedUnrun"] else "kept"
        return "continuable_stop_reasons", row, column_requirement(spec, "continuable_stop_reasons", column)
    [row] = [r for r in spec.table("results", "one_shot_stop_reasons").rows if r["turn_end"] == kind]
    column = "cancelled" if request["cancelled"] else "recorded"
    return "one_shot_stop_reasons", row, column_requirement(spec, "one_shot_stop_reasons", column)


def selection_of(spec: Spec, request: Json, *, own: bool = True) -> list[Json]:
    steps = request["steps"][request["boundary"] :] if own else request["steps"]
    selected = oracle_values(spec, request["binding"], steps)[-1] if steps else None
    return selected if selected is not None else []


def expected_settlement(spec: Spec, request: Json, bound: Callable[[str], Any]) -> Json:
    """The spec's answer for a settle_run input; ``bound`` is the (separately checked) diagnostic bound."""
    collected = selection_of(spec, request)
    table, row, _ = _path(spec, request)
    if table == "out_of_process_settlement":
        assert row is not None
        attempt = request["attempt"]
        source = attempt.get("result", {})
        result: Json = {
            "output": source["output"] if row["output"] == "attempt" else collected,
            "stopReason": row["stop_reason"] or source["stopReason"],
        }
        diagnostic = {"attempt": source.get("diagnostic"), "collected": attempt.get("diagnostic"), "none": None}[
            row["diagnostic"]
        ]
        if diagnostic is not None:
            result["diagnostic"] = bound(diagnostic)
    elif row is None:  # a continuable teardown failure
        result = {"output": [], "stopReason": "error"}
    elif table == "continuable_stop_reasons":
        result = {"output": collected, "stopReason": row["dropped" if request["droppedUnrun"] else "kept"]}
    else:
        result = {"output": collected, "stopReason": row["cancelled" if request["cancelled"] else "recorded"]}
    end: Json = {"stopReason": result["stopReason"]}
    if result["output"]:
        end["lastAssistantMessage"] = result["output"]
    return {"result": result, "end": end}


def diagnose_settlement(
    spec: Spec, request: Json, expected: Json, actual: Any, probe: Callable[[Json], Any] | None = None
) -> list[str]:
    """Which requirements the differences between ``actual`` and ``expected`` show, field by field."""
    if (
        not isinstance(actual, dict)
        or not isinstance(actual.get("result"), dict)
        or not isinstance(actual.get("end"), dict)
    ):
        return ["RES-001"]
    _table, _row, rule = _path(spec, request)
    want, got = expected["result"], actual["result"]
    end_want, end_got = expected["end"], actual["end"]
    ids: list[str] = []
    if set(got) - set(RESULT_KEYS):
        ids.append("RES-007")
    if got.get("stopReason") != want["stopReason"]:
        ids.append(rule)
    diagnostic = want.get("diagnostic")
    if "diagnostic" in got and "diagnostic" not in want:
        ids.append("RES-009" if request["driver"] == "in-process" and rule != "RES-014" else rule)
    elif got.get("diagnostic") != diagnostic:
        over = isinstance(got.get("diagnostic"), str) and utf8_size(got["diagnostic"]) > _LIMIT
        ids.append("DIA-021" if over else rule)
    if got.get("output") != want["output"]:
        ids.append(_output_requirement(spec, request, got, rule, probe))
    if "diagnostic" in end_got or (
        isinstance(diagnostic, str) and diagnostic and diagnostic in json.dumps(end_got, ensure_ascii=False)
    ):
        ids.append("RES-008")
    output = got.get("output")
    if isinstance(output, list) and output:
        if end_got.get("lastAssistantMessage") != output:
            ids.append("RES-004")
    elif "lastAssistantMessage" in end_got:
        ids.append("RES-005")
    if end_got.get("stopReason") != got.get("stopReason"):
        ids.append("RES-006")
    if set(end_got) - {"stopReason", "lastAssistantMessage", "diagnostic"}:
        ids.append("RES-006")
    if not ids and end_got != end_want:  # the end mirrors a wrong result faithfully: the result's rule
        ids.append(rule)
    return list(dict.fromkeys(ids)) or [rule]


def _output_requirement(spec: Spec, request: Json, got: Json, rule: str, probe: Callable[[Json], Any] | None) -> str:
    output = got.get("output")
    if not isinstance(output, list):
        return "RES-001"
    if rule in ("RES-014", "RES-015"):  # withheld, or the attempt's own output
        return rule
    attempt = request.get("attempt", {})
    diagnostic = attempt.get("diagnostic") or attempt.get("result", {}).get("diagnostic")
    if diagnostic and diagnostic in json.dumps(output, ensure_ascii=False):
        return "RES-008"
    if request["boundary"] and output == selection_of(spec, request, own=False):
        return "RES-003"
    blamed = _selection_requirement(spec, request, output, probe)
    returned = attempt.get("result", {}).get("output")
    if blamed == "RES-002" and rule == "RES-016" and output == returned:
        return "RES-016"  # the fold is right, but the cancelled run took the attempt's output
    return blamed


def _selection_requirement(spec: Spec, request: Json, output: list[Json], probe: Callable[[Json], Any] | None) -> str:
    """A wrong output on a path whose output is the selection. ``probe`` asks the adapter for
    its own fold over the run's own steps: when that goes wrong, the selection rule the step
    that made it go wrong breaks is blamed, as the selection tier blames the same fold (the
    settlement of a wrong fold is right about the fold); when it is right, the settlement lost
    it on the way to the result (RES-002)."""
    own = request["steps"][request["boundary"] :]
    if probe is not None and own:
        values = probe(request)
        if isinstance(values, list) and len(values) == len(own):
            ask = probe

            def fold(binding: str, steps: list[Json]) -> Any:  # any log's fold, for the diagnosis to ask
                return ask({"binding": binding, "steps": steps, "boundary": 0})

            found = first_fold_difference(spec, request["binding"], own, values, fold)
            return found[1][0] if found is not None else "RES-002"
    oracle = SelectionOracle(spec, request["binding"])
    for step in own:
        oracle.push(step)
    if output == [] and oracle.empty_messages:
        return "SEL-003"
    if output == [] and oracle.message is None:
        return "SEL-008"
    return diagnose(spec, request["binding"], own, output)[0][0] if own and output else "RES-002"


def as_settle_vector(covers: list[str], request: Json, expected: Json) -> str:
    """A failing example as a row for spec/results.yaml's settle_vectors, ready to paste."""
    return pasteable_row("A run Hypothesis found", {"covers": covers, "input": request, "expected": expected})


def check_settlement(
    spec: Spec, request: Json, expected: Json, actual: Any, probe: Callable[[Json], Any] | None = None
) -> None:
    """settle_run's answer against the spec's; ``probe`` gives the adapter's own selection over
    the run's own steps (its fold), to tell a selection bug from a settlement bug."""
    if actual != expected:
        ids = diagnose_settlement(spec, request, expected, actual, probe)
        raise Violation(
            ids,
            operation="settle_run",
            input=request,
            expected=expected,
            actual=actual,
            sections={
                "as a settle vector (spec/results.yaml, table settle_vectors)": as_settle_vector(ids, request, expected)
            },
        )


# --------------------------------------------------------------------------- rendering


def expected_rendering(spec: Spec, result: Json) -> Json:
    """The parent's tool result, assembled from the headlines and render_fragments tables."""
    fragments = {row["name"]: row["text"] for row in spec.table("results", "render_fragments").rows}
    headlines = {row["stop_reason"]: row["headline"] for row in spec.table("results", "headlines").rows}
    text = "".join(b["text"] for b in result["output"] if b["type"] == "text")
    stop = result["stopReason"]
    if stop in headlines and headlines[stop] is None:
        return {"isError": False, "text": text}
    headline = headlines.get(stop) or (
        fragments["abnormal_headline_open"] + stop + fragments["abnormal_headline_close"]
    )
    message = headline
    if "diagnostic" in result:
        message += fragments["diagnostic_prefix"] + result["diagnostic"]
    if text:
        message += fragments["partial_prefix"] + text
    return {"isError": True, "text": fragments["error_prefix"] + message}


def diagnose_rendering(spec: Spec, result: Json, expected: Json, actual: Any) -> list[str]:
    """The rule that separates ``actual`` from the spec's rendering: completed text (RES-020),
    error flag and prefix (RES-021), headline (RES-022/023), diagnostic line (RES-024/026),
    partial text (RES-025)."""
    if not isinstance(actual, dict) or not isinstance(actual.get("text"), str):
        return ["RES-021"]
    fragments = {row["name"]: row["text"] for row in spec.table("results", "render_fragments").rows}
    headlines = {row["stop_reason"]: row["headline"] for row in spec.table("results", "headlines").rows}
    stop = result["stopReason"]
    if not expected["isError"]:
        return ["RES-020"]
    text, got = expected["text"], actual["text"]
    if actual.get("isError") is not True or not got.startswith(fragments["error_prefix"]):
        return ["RES-021"]
    headline = headlines.get(stop) or (
        fragments["abnormal_headline_open"] + stop + fragments["abnormal_headline_close"]
    )
    body = got[len(fragments["error_prefix"]) :]
    if not body.startswith(headline):
        return ["RES-022" if stop in headlines else "RES-023"]
    rest, want_rest = body[len(headline) :], text[len(fragments["error_prefix"]) + len(headline) :]
    if "diagnostic" in result:
        line = fragments["diagnostic_prefix"] + result["diagnostic"]
        if not rest.startswith(line):
            return ["RES-026" if result["diagnostic"] and line[:14] in rest else "RES-024"]
        rest, want_rest = rest[len(line) :], want_rest[len(line) :]
    elif rest.startswith(fragments["diagnostic_prefix"]):
        return ["RES-024"]
    return ["RES-025"] if rest != want_rest else ["RES-021"]


def as_render_vector(covers: list[str], result: Json, expected: Json) -> str:
    """A failing example as a row for spec/results.yaml's render_vectors, ready to paste."""
    return pasteable_row("A result Hypothesis found", {"covers": covers, "result": result, "expected": expected})


def check_rendering(spec: Spec, result: Json, expected: Json, actual: Any) -> None:
    if actual != expected:
        ids = diagnose_rendering(spec, result, expected, actual)
        raise Violation(
            ids,
            operation="render_tool_result",
            input=result,
            expected=expected,
            actual=actual,
            detail=difference(expected, actual),
            sections={
                "as a render vector (spec/results.yaml, table render_vectors)": as_render_vector(ids, result, expected)
            },
        )
