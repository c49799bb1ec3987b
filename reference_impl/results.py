"""Settling a child run into its SubagentResult and subagent/end fields, and rendering the
result as the parent's tool result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reference_impl.diagnostic import bound_diagnostic
from reference_impl.selection import AssistantOutputFold, ContentBlock

Json = dict[str, Any]


def _select(fold: AssistantOutputFold, steps: Sequence[Json]) -> list[ContentBlock] | None:
    for step in steps:
        fold.push_step(step)
    return fold.collect()


def _one_shot_stop_reason(turn_end: str | None, cancelled: bool) -> str:
    recorded = {"completed": "completed", "max-tokens": "max-tokens", "aborted": "aborted", "blocked": "refusal"}.get(
        turn_end or "", "error"
    )
    # A cancelled run that did not complete was cut short, whatever the turn recorded.
    return "aborted" if cancelled and recorded != "completed" else recorded


def _epoch_stop_reason(turn_end: str | None, dropped_unrun: bool) -> str:
    if turn_end in (None, "completed"):
        return "aborted" if dropped_unrun else "completed"
    return {"max-tokens": "max-tokens", "aborted": "aborted", "interrupted": "aborted", "blocked": "refusal"}.get(
        turn_end, "error"
    )


def _end(result: Json) -> Json:
    end: Json = {"stopReason": result["stopReason"]}
    if result["output"]:  # omitted, never [], when the child produced nothing
        end["lastAssistantMessage"] = result["output"]
    return end


def settle_run(request: Json, fold_class: type[AssistantOutputFold] = AssistantOutputFold) -> Json:
    """One run's result and subagent/end fields, from the run's own part of its log."""
    own = request["steps"][request["boundary"] :]
    selected = _select(fold_class(request["binding"]), own)
    output = selected if selected is not None else []
    if request["driver"] == "out-of-process":
        attempt = request["attempt"]
        if request["cancelled"]:
            result: Json = {"output": output, "stopReason": "aborted"}
        elif attempt["outcome"] == "returned":
            result = dict(attempt["result"])
            if "diagnostic" in result:
                result["diagnostic"] = bound_diagnostic(result["diagnostic"])
        else:
            result = {"output": output, "stopReason": "error"}
            if "diagnostic" in attempt:
                result["diagnostic"] = bound_diagnostic(attempt["diagnostic"])
    elif request["shape"] == "continuable":
        if request["teardownFailed"]:
            return {"result": {"output": [], "stopReason": "error"}, "end": {"stopReason": "error"}}
        result = {"output": output, "stopReason": _epoch_stop_reason(request["turnEnd"], request["droppedUnrun"])}
    else:
        result = {"output": output, "stopReason": _one_shot_stop_reason(request["turnEnd"], request["cancelled"])}
    return {"result": result, "end": _end(result)}


_HEADLINES = {
    "aborted": "subagent run was cancelled",
    "error": "subagent run failed",
    "max-tokens": "subagent run hit its token limit before finishing",
    "refusal": "subagent declined the task",
}


def render_tool_result(result: Json) -> Json:
    """What the parent model sees: the text, or an error with headline, diagnostic and partial text."""
    text = "".join(block["text"] for block in result["output"] if block.get("type") == "text")
    stop_reason = result["stopReason"]
    if stop_reason == "completed":
        return {"isError": False, "text": text}
    message = _HEADLINES.get(stop_reason, f"subagent run ended abnormally ({stop_reason})")
    if "diagnostic" in result:
        message += "\nDiagnostic: " + result["diagnostic"]
    if text:
        message += "\nPartial output before the run ended:\n" + text
    return {"isError": True, "text": "Error: " + message}
