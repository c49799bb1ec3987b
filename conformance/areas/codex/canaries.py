"""Canaries for Codex runs (redaction.yaml RED-008): placeholders, canary and decoy names, and one
planter per Codex row of redaction.yaml table canary_sites.

A planted run is a template whose raw fields hold placeholders; instantiating it once with
canaries and once with decoys gives twin runs whose diagnostics must be the same and canary-free.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.areas.codex.scenarios import (
    THREAD_ID,
    TURN_ID,
    Json,
    agent_message,
    failed_turn,
    item_completed,
    notification,
    process_exit,
    response,
    scenario,
    server_request,
    terminal,
    turn_error,
)
from conformance.areas.codex.strategies import split_points
from conformance.areas.memo import memo

_MARK = re.compile(r"«(\d+)»")


class Marks:
    """Placeholders for canaries in a scenario template: each call gives the next one."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"«{self.count - 1}»"


def canary_names(hexes: list[str]) -> list[str]:
    """Canaries that are no substring of any Codex grammar sentence and cannot complete a stderr signature."""
    return [f"SECRET_{h}_TOKEN" if n % 2 == 0 else f"/private/{h}/secret.txt" for n, h in enumerate(hexes)]


# Values that spell what a diagnostic is made of (a category, a stage, a field, a whole line), so
# that a provider deriving any text from a raw field shows (RED-005). None is a value a field is
# read for (an exact variant name) or contains a stderr signature or a placeholder.
DECOYS = [
    "category: contextWindowExceeded",
    "stage: process; category: process-exit",
    "HTTP status: 503",
    "exit code: 0",
    "signal: SIGKILL",
    "Product subagent failure (product: Codex; stage: turn; category: other)",
    "Codex unattended decision (mode: never; request: user input; decision: empty response): "
    "the provider does not collect interactive answers",
    "contextWindowExceeded ",
    "CYBERPOLICY",
]


def decoy_names(count: int) -> list[str]:
    """``count`` distinct decoys to stand where the canaries stood."""
    return [f"{DECOYS[n % len(DECOYS)]} #{n}" for n in range(count)]


def instantiate(template: Any, names: list[str]) -> Any:
    """The template with every placeholder replaced by its canary (in keys and values)."""

    def text(value: str) -> str:
        return _MARK.sub(lambda m: names[int(m.group(1))], value)

    if isinstance(template, str):
        return text(template)
    if isinstance(template, list):
        return [instantiate(v, names) for v in template]
    if isinstance(template, dict):
        return {text(k): instantiate(v, names) for k, v in template.items()}
    return template


# ---- canary planting: one planter per Codex row of redaction.yaml table canary_sites


@dataclass
class RunTemplate:
    """A scenario under construction whose raw fields may hold canary placeholders."""

    marks: Marks
    thread: str = THREAD_ID
    turn: str = TURN_ID
    ids: bool = False  # whether request ids are canaries too (site protocol-id)
    requests: int = 0

    def request_id(self) -> Any:
        self.requests += 1
        return self.marks() if self.ids else f"request-{self.requests}"


@dataclass
class Planted:
    """Events carrying canaries; ``turn`` is a terminal turn to settle with, ``settles`` says that
    the planted events already settle the run (so that nothing but stderr and an exit may follow)."""

    events: list[Json]
    turn: Json | None = None
    settles: bool = False


def _infos(spec: Any) -> st.SearchStrategy[Any]:
    """A codexErrorInfo of the union, of a newer version, or outside both (no canary inside)."""
    wires = [r["wire"] for r in spec.table("codex", "variants").rows]
    newer = [r["wire"] for r in spec.table("codex", "newer_variants").rows]
    return st.sampled_from([*wires, *newer, "futureError", {}, None])


def _approval_decisions() -> st.SearchStrategy[Any]:
    return st.sampled_from([["cancel"], ["decline"], ["accept", "decline", "cancel"], ["accept"], None])


def _plant_turn_error_message(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    message = draw(st.sampled_from([f"{m()}", f"{m()} in {m()}", f"failed at {m()} with {m()}"]))
    return Planted([], failed_turn(turn_error(draw(_infos(spec)), message), run.turn))


def _plant_additional_details(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    details = draw(st.sampled_from([run.marks(), f"raw command payload {run.marks()}"]))
    return Planted([], failed_turn(turn_error(draw(_infos(spec)), additionalDetails=details), run.turn))


def _plant_turn_kind(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    detail = draw(
        st.sampled_from([{"turnKind": m()}, {"turnKind": "review", m(): m()}, {"turnKind": m(), "note": m()}])
    )
    return Planted([], failed_turn(turn_error({"activeTurnNotSteerable": detail}), run.turn))


def _plant_unknown_variant(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    shapes: list[Callable[[], Any]] = [
        lambda: m(),
        lambda: {m(): {"message": m()}},
        lambda: {"httpConnectionFailed": {"httpStatusCode": 503}, m(): {}},
        lambda: {"activeTurnNotSteerable": m()},
        lambda: [m(), "contextWindowExceeded"],
        lambda: {"other": {"detail": m()}},
        lambda: {"responseStreamDisconnected": {"httpStatusCode": m()}},
        lambda: {"httpConnectionFailed": [m()]},
    ]
    info = shapes[draw(st.integers(0, len(shapes) - 1))]()
    return Planted([], failed_turn(turn_error(info), run.turn))


def _plant_approval_command(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    params: Json = {"threadId": run.thread, "turnId": run.turn, "command": f"cat {m()}", "cwd": m(), "reason": m()}
    decisions = draw(_approval_decisions())
    if decisions is not None:
        params["availableDecisions"] = decisions
    return Planted(
        [server_request(run.request_id(), "item/commandExecution/requestApproval", params)],
        settles=decisions == ["accept"],
    )


def _plant_item_command(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    item = {
        "type": "commandExecution",
        "status": "declined",
        "command": f"cat {m()}",
        "cwd": m(),
        "aggregatedOutput": m(),
    }
    return Planted([item_completed(item, run.turn, run.thread)])


def _plant_file_change(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    if draw(st.booleans()):
        item = {"type": "fileChange", "status": "declined", "changes": [{"path": m(), "kind": "update", "diff": m()}]}
        return Planted([item_completed(item, run.turn, run.thread)])
    params: Json = {"threadId": run.thread, "turnId": run.turn, "patch": m(), "grantRoot": m(), "reason": m()}
    decisions = draw(_approval_decisions())
    if decisions is not None:
        params["availableDecisions"] = decisions
    return Planted(
        [server_request(run.request_id(), "item/fileChange/requestApproval", params)], settles=decisions == ["accept"]
    )


def _plant_request_payload(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    ids = {"threadId": run.thread, "turnId": run.turn}
    choices: list[Callable[[], tuple[str, Json]]] = [
        lambda: (
            "item/permissions/requestApproval",
            {**ids, "permissions": {"fileSystem": {"write": [m()]}}, "reason": m()},
        ),
        lambda: ("item/tool/requestUserInput", {**ids, "questions": [{"id": m(), "header": m(), "question": m()}]}),
        lambda: (
            "mcpServer/elicitation/request",
            {
                **ids,
                "turnId": draw(st.sampled_from([run.turn, None])),
                "serverName": m(),
                "message": m(),
                "requestedSchema": {"properties": {m(): {"type": "string"}}},
            },
        ),
        lambda: (f"{m()}/request", {**ids, "payload": m()}),
    ]
    pick = draw(st.integers(0, len(choices) - 1))
    method, params = choices[pick]()
    return Planted([server_request(run.request_id(), method, params)], settles=pick == len(choices) - 1)


def _plant_error_notification(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    error = turn_error(draw(_infos(spec)), f"{m()} at {m()}", additionalDetails=m())
    params = {"error": error, "threadId": run.thread, "turnId": run.turn, "willRetry": draw(st.booleans())}
    return Planted([notification("error", params)])


def _plant_rpc_error(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    return Planted([{"frame": {"id": m(), "error": {"code": -32000, "message": m(), "data": {"detail": m()}}}}])


def _plant_protocol_ids(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    params = {"threadId": run.thread, "turnId": run.turn}
    return Planted([server_request(run.request_id(), "item/tool/requestUserInput", params)])


def _plant_stderr(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    signatures = [str(v) for v in spec.vocabulary("codex.stderr_signature").values]
    pieces = draw(st.lists(st.sampled_from([*signatures, "noise"]), max_size=3))
    stream = [m()]
    for piece in pieces:
        stream += [piece, m()] if piece != "noise" else [f" {m()} at {m()}\n"]
    chunks: list[str] = []
    for piece in stream:  # cut inside signatures, never inside a placeholder
        chunks += split_points(draw, piece, max_cuts=2) if "«" not in piece else [piece]
    return Planted([{"stderr": c} for c in chunks])


PLANTERS: dict[str, Callable[[st.DrawFn, Any, RunTemplate], Planted]] = {
    "turn-error-message": _plant_turn_error_message,
    "turn-error-additional-details": _plant_additional_details,
    "active-turn-kind": _plant_turn_kind,
    "unknown-variant": _plant_unknown_variant,
    "approval-request-command": _plant_approval_command,
    "command-item-command": _plant_item_command,
    "file-change-patch": _plant_file_change,
    "server-request-payload": _plant_request_payload,
    "error-notification": _plant_error_notification,
    "rpc-error-message": _plant_rpc_error,
    "protocol-id": _plant_protocol_ids,
    "stderr-chunk": _plant_stderr,
}


@memo
@st.composite
def planted_runs(draw: st.DrawFn, spec: Any, site: str) -> tuple[Json, int]:
    """A scenario template with canaries planted at ``site`` (and the number of placeholders):
    the planted frames come early or late, then any settlement, then maybe an exit or stderr.
    Nothing but stderr and an exit follows the settling observation (CDX-074)."""
    marks = Marks()
    run = RunTemplate(marks)
    if site == "protocol-id":
        run.thread, run.turn, run.ids = marks(), marks(), True
    mode = draw(st.sampled_from([str(v) for v in spec.vocabulary("codex.permission_mode").values]))
    planted = PLANTERS[site](draw, spec, run)
    exited = False
    early = not planted.settles and draw(st.booleans())
    if site == "rpc-error-message" and draw(st.booleans()):  # the turn/start request itself fails
        m = run.marks
        events = [
            *planted.events,
            {"turn_start": {"error": {"code": -32600, "message": f"{m()} in {m()}", "data": m()}}},
        ]
    else:
        events = [*(planted.events if early else []), response(run.turn)]
        if draw(st.booleans()):
            events.append(
                agent_message("partial answer", draw(st.sampled_from(["final_answer", None])), run.turn, run.thread)
            )
        if not early:
            events += planted.events
        if site == "protocol-id" and draw(st.booleans()):
            events.append(
                item_completed({"type": "fileChange", "status": "declined", "id": marks()}, run.turn, run.thread)
            )
        if planted.turn is not None:
            events.append(terminal(planted.turn, run.thread))
        elif not planted.settles:
            ending = draw(st.sampled_from(["failed", "completed", "interrupted", "exit", "eof", "unobservable"]))
            if ending in ("failed", "completed", "interrupted"):
                error = turn_error(draw(_infos(spec))) if ending != "completed" else None
                events.append(terminal(failed_turn(error, run.turn, status=ending), run.thread))
            elif ending == "exit":
                events.append(
                    process_exit(draw(st.sampled_from([None, 0, 17])), draw(st.sampled_from([None, "SIGKILL"])))
                )
                exited = True
            elif ending == "eof":
                events.append({"stdout_end": True})
            else:
                events.append({"exit_unobservable": True})
                exited = True
    if draw(st.booleans()):
        events.append({"stderr": f"{marks()} recorded sandbox violation: {marks()}"})
    if not exited and draw(st.booleans()):
        events.append(process_exit(draw(st.sampled_from([None, 3])), draw(st.sampled_from([None, "SIGTERM"]))))
    cancelled = draw(st.integers(0, 9)) == 0
    return scenario(events, mode=mode, thread_id=run.thread, cancelled=cancelled), marks.count
