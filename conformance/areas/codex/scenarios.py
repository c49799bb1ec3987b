"""Scenario builders for codex_outcome: one observation each, in the shapes of spec/codex.yaml
table outcome_vectors.

A scenario is what a Codex provider observed of one published run, in order. The vector tests,
the generated runs and the canary planters all build their scenarios here, so the shape of an
observation is written once.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

THREAD_ID = "thread-1"  # the run's thread and committed turn in the tables of codex.yaml
TURN_ID = "turn-1"


def response(turn_id: Any = TURN_ID) -> Json:
    """A valid turn/start response committing ``turn_id``."""
    return {"turn_start": {"result": {"turn": {"id": turn_id}}}}


def notification(method: str, params: Any) -> Json:
    return {"frame": {"method": method, "params": params}}


def item_completed(item: Any, turn_id: Any = TURN_ID, thread_id: Any = THREAD_ID) -> Json:
    return notification("item/completed", {"threadId": thread_id, "turnId": turn_id, "item": item})


def agent_message(text: Any, phase: Any, turn_id: Any = TURN_ID, thread_id: Any = THREAD_ID) -> Json:
    return item_completed({"type": "agentMessage", "text": text, "phase": phase}, turn_id, thread_id)


def terminal(turn: Json, thread_id: Any = THREAD_ID) -> Json:
    """A turn/completed notification carrying ``turn``."""
    return notification("turn/completed", {"threadId": thread_id, "turn": turn})


def failed_turn(error: Any, turn_id: Any = TURN_ID, status: Any = "failed") -> Json:
    """The ``turn`` of a terminal; ``error`` is turn.error, or ``...`` to leave the key out."""
    turn: Json = {"id": turn_id, "status": status}
    if error is not ...:
        turn["error"] = error
    return turn


def turn_error(info: Any, message: str = "fixture failure", **extra: Any) -> Json:
    """A TurnError; ``info`` is codexErrorInfo, or ``...`` to leave the key out."""
    error: Json = {"message": message, **extra}
    if info is not ...:
        error["codexErrorInfo"] = info
    return error


def server_request(request_id: Any, method: str, params: Any) -> Json:
    return {"frame": {"id": request_id, "method": method, "params": params}}


def process_exit(exit_code: int | None, signal: str | None) -> Json:
    return {"exit": {"exitCode": exit_code, "signal": signal}}


def scenario(events: list[Json], *, mode: str = "never", thread_id: str = THREAD_ID, cancelled: bool = False) -> Json:
    request: Json = {"mode": mode, "thread_id": thread_id, "events": events}
    if cancelled:
        request["cancelled"] = True
    return request
