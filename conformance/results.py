"""Strategies and the oracle for settle_run and render_tool_result, built from spec/results.yaml."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.selection import delta_text, oracle_values, steps_for

Json = dict[str, Any]

# Stop reasons outside the contract's five: the union is merge-extensible.
_ODD_STOP_REASONS = st.sampled_from(["paused", "frobnicated", "", "Completed", "error "])


def turn_ends(spec: Any) -> st.SearchStrategy[str | None]:
    """A turn/end reason kind: every declared kind ("none" is no turn, null), and unknown ones."""
    kinds = [k for k in spec.vocabulary("results.turn_end_kind").values if k not in ("none", "unknown")]
    return st.one_of(st.sampled_from(kinds), st.none(), st.sampled_from(["timeout", "Completed", "paused"]))


def diagnostics() -> st.SearchStrategy[str]:
    """Provider diagnostics, short and far past the 4096-byte bound."""
    unit = st.sampled_from(["x", "é", "权限", "😀", "\n", "Product subagent failure"])
    return st.one_of(st.text(max_size=40), st.builds(lambda u, n: u * n, unit, st.integers(1000, 4200)))


def content_blocks() -> st.SearchStrategy[list[Json]]:
    block = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, delta_text),
        st.builds(lambda t: {"type": "reasoning", "text": t}, delta_text),
        st.just({"type": "tool-call", "id": "call_1", "name": "read", "arguments": "{}"}),
    )
    return st.lists(block, max_size=4)


def subagent_results(spec: Any) -> st.SearchStrategy[Json]:
    stop = st.one_of(st.sampled_from(list(spec.vocabulary("results.stop_reason").values)), _ODD_STOP_REASONS)
    with_diag = st.builds(
        lambda o, s, d: {"output": o, "stopReason": s, "diagnostic": d}, content_blocks(), stop, diagnostics()
    )
    without = st.builds(lambda o, s: {"output": o, "stopReason": s}, content_blocks(), stop)
    return st.one_of(with_diag, without)


@st.composite
def settle_requests(draw: st.DrawFn, spec: Any) -> Json:
    """A settle_run input for any of the three paths, over a generated child log."""
    binding = draw(st.sampled_from(list(spec.vocabulary("selection.binding").values)))
    steps = draw(steps_for(binding))
    request: Json = {"binding": binding, "steps": steps, "boundary": draw(st.integers(0, len(steps)))}
    path = draw(st.sampled_from(["one-shot", "continuable", "out-of-process"]))
    if path == "one-shot":
        request.update(
            shape="one-shot", driver="in-process", turnEnd=draw(turn_ends(spec)), cancelled=draw(st.booleans())
        )
    elif path == "continuable":
        request.update(
            shape="continuable",
            driver="in-process",
            turnEnd=draw(turn_ends(spec)),
            droppedUnrun=draw(st.booleans()),
            teardownFailed=draw(st.booleans()),
        )
    else:
        attempt = draw(
            st.one_of(
                st.builds(lambda r: {"outcome": "returned", "result": r}, subagent_results(spec)),
                st.just({"outcome": "rejected"}),
                st.builds(lambda d: {"outcome": "rejected", "diagnostic": d}, diagnostics()),
            )
        )
        request.update(shape="one-shot", driver="out-of-process", cancelled=draw(st.booleans()), attempt=attempt)
    return request


def _kind(spec: Any, turn_end: str | None) -> str:
    if turn_end is None:
        return "none"
    return turn_end if turn_end in spec.vocabulary("results.turn_end_kind").values else "unknown"


def expected_settlement(spec: Any, request: Json, bound: Any) -> Json:
    """The spec's answer for a settle_run input; ``bound`` is the (separately checked) diagnostic bound."""
    own = request["steps"][request["boundary"] :]
    selected = oracle_values(spec, request["binding"], own)[-1] if own else None
    collected = selected if selected is not None else []
    kind = _kind(spec, request.get("turnEnd"))
    if request["driver"] == "out-of-process":
        attempt = request["attempt"]
        [row] = [
            r
            for r in spec.table("results", "out_of_process_settlement").rows
            if r["attempt"] == attempt["outcome"] and r["cancelled"] == request["cancelled"]
        ]
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
    elif request["shape"] == "continuable":
        if request["teardownFailed"]:
            result = {"output": [], "stopReason": "error"}
        else:
            [row] = [r for r in spec.table("results", "continuable_stop_reasons").rows if r["turn_end"] == kind]
            result = {"output": collected, "stopReason": row["dropped" if request["droppedUnrun"] else "kept"]}
    else:
        [row] = [r for r in spec.table("results", "one_shot_stop_reasons").rows if r["turn_end"] == kind]
        result = {"output": collected, "stopReason": row["cancelled" if request["cancelled"] else "recorded"]}
    end: Json = {"stopReason": result["stopReason"]}
    if result["output"]:
        end["lastAssistantMessage"] = result["output"]
    return {"result": result, "end": end}


def expected_rendering(spec: Any, result: Json) -> Json:
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
