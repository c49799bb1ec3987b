"""The observation that fires each row of codex.yaml table permission_facts, built from the spec's
data: a server request from the first granting row of server_request_replies with the row's
request and decision, a declined item, a stderr signature, or the sandboxError terminal.

A test that needs a given fact observed (alone, or before and after another one) builds it here,
so the shape of each trigger is written once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.areas.codex.oracle import Fact
from conformance.areas.codex.scenarios import (
    Json,
    failed_turn,
    item_completed,
    server_request,
    terminal,
    turn_error,
)


@dataclass(frozen=True)
class Trigger:
    """What fires one permission_facts row: ``event`` is the observation, ``replies`` what the
    provider writes for it, ``terminal`` whether that observation is the run's terminal."""

    fact: Fact
    event: Json
    replies: list[Json] = field(default_factory=list)
    terminal: bool = False


def fact_trigger(spec: Any, row: Json, n: int = 0) -> Trigger:
    """The observation firing ``row`` of permission_facts; ``n`` tells its ids apart from another's."""
    fact = Fact(row["request"], row["decision"], row["reason"])
    trigger = str(row["trigger"])
    if trigger.startswith("item/completed"):
        kind = trigger.split("type ")[1].split(" ")[0]
        return Trigger(fact, item_completed({"type": kind, "status": "declined", "id": f"item-{n}"}))
    if "sandboxError" in trigger:
        return Trigger(fact, terminal(failed_turn(turn_error("sandboxError"))), terminal=True)
    if trigger.startswith("stderr"):
        return Trigger(fact, {"stderr": trigger.split('"')[1]})
    granting = [
        r
        for r in spec.table("codex", "server_request_replies").rows
        if not r["fails_run"] and (r["request"], r["decision"]) == (row["request"], row["decision"])
    ]
    assert granting, f"no row of server_request_replies records the fact of {trigger!r}"
    vector, request_id = granting[0], f"request-{n}"
    assert trigger.startswith(vector["method"]), f"{vector['name']} is no {trigger!r}"
    return Trigger(
        fact, server_request(request_id, vector["method"], vector["params"]), [{"id": request_id, **vector["reply"]}]
    )
