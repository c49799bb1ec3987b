"""Tier 2, codex_tables: codex_outcome against one deterministic case per row of codex.yaml's
prose tables (terminal_handling, permission_facts, stop_reasons, notification_handling). The
rows are prose, so each case is checked against its row before it is sent.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.areas.codex.checks import Outcome, codex_checks
from conformance.areas.codex.scenarios import (
    THREAD_ID,
    TURN_ID,
    agent_message,
    failed_turn,
    item_completed,
    notification,
    process_exit,
    response,
    scenario,
    terminal,
    turn_error,
)
from conformance.areas.codex.triggers import fact_trigger
from conformance.plugin import contract
from conformance.verdict.reach import row_params

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"codex_outcome"})

Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = contract()  # the spec at the claimed product versions
CHECKS = codex_checks(_SPEC)
ORACLE = CHECKS.oracle


def _terminal_case(row: Json) -> tuple[Json, Json]:
    """A run ending with the terminal of one terminal_handling row, and the spec's result."""
    answer = [agent_message("partial", "final_answer")] if row["name"] == "completed-with-answer" else []
    status = row["status"] if row["status"] in ORACLE.statuses else "inProgress"
    wire = {"failed-context-window": "contextWindowExceeded", "failed-sandbox-error": "sandboxError"}.get(
        row["name"], "other"
    )
    request = scenario([response(), *answer, terminal(failed_turn(turn_error(wire), status=status))])
    if row["stop_reason"] == "completed":
        return request, {"stopReason": "completed", "output": [{"type": "text", "text": "partial"}], "replies": []}
    category = wire if row["category"] == "mapped" or row["category"] == wire else row["category"]
    fact = ORACLE.fact_by_trigger("sandboxError") if row["permission_fact"] else None
    return request, ORACLE.failure("never", [], row["stage"], category, fact=fact)


@requirement("CDX-013", "CDX-011", "CDX-039")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "terminal_handling"))
def test_terminal_handling_row(codex_outcome: Outcome, row: Json) -> None:
    """Each row of terminal_handling, deterministically: its status, its stop reason, its stage
    and category, and the sandbox fact where the row records one."""
    request, expected = _terminal_case(row)
    assert expected["stopReason"] == row["stop_reason"], "the suite's case disagrees with the row"
    CHECKS.check(codex_outcome, request, expected)


@requirement("CDX-036", "CDX-039", "CDX-040")
@pytest.mark.parametrize(
    "row", row_params(_SPEC, "codex", "permission_facts", where=lambda r: not fact_trigger(_SPEC, r).replies)
)
def test_permission_fact_of_each_trigger(codex_outcome: Outcome, row: Json) -> None:
    """Each permission_facts row fired by an item, a terminal or stderr (the server requests are
    the rows of server_request_replies) records exactly its line."""
    trigger = fact_trigger(_SPEC, row)
    events = [trigger.event] if trigger.terminal else [trigger.event, terminal(failed_turn(turn_error("other")))]
    category = "sandboxError" if trigger.terminal else "other"
    CHECKS.check(
        codex_outcome,
        scenario([response(), *events]),
        ORACLE.failure("never", [], "turn", category, fact=trigger.fact),
    )


# One run failing at each stage a run-result can name (table stages), keyed by the stage:
# the events and the failure's category.
_STAGE_CASES: dict[str, tuple[list[Json], str]] = {
    "turn-start": ([{"turn_start": {"error": {"code": -32600, "message": "turn/start refused"}}}], "unknown"),
    "turn": ([response(), terminal(failed_turn(turn_error("other")))], "other"),
    "process": ([response(), process_exit(3, None)], "process-exit"),
}


@requirement("CDX-010")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "stages", where=lambda r: "run-result" in r["surfaces_in"]))
def test_failure_line_names_the_stage(codex_outcome: Outcome, row: Json) -> None:
    """A run failing at each stage a run-result can show: its failure line names that stage,
    with one of the categories the stage's row lists."""
    events, category = _STAGE_CASES[row["stage"]]
    assert category in row["categories"], "the suite's case disagrees with its row"
    CHECKS.check_stage(codex_outcome, scenario(events), row["stage"], list(row["categories"]))


# One run per row of table stop_reasons, in its order: (events after the turn/start response,
# cancelled, stage and category of the failure). The rows are prose; each case is checked
# against its row's stop reason and category before it is sent.
_ANSWER = agent_message("answer", "final_answer")
_STOP_CASES: list[tuple[list[Json], bool, str, str]] = [
    ([_ANSWER, terminal(failed_turn(None, status="completed"))], False, "", ""),
    ([terminal(failed_turn(turn_error("contextWindowExceeded")))], False, "turn", "contextWindowExceeded"),
    ([terminal(failed_turn(turn_error("cyberPolicy")))], False, "turn", "cyberPolicy"),
    ([terminal(failed_turn(turn_error("usageLimitExceeded")))], False, "turn", "usageLimitExceeded"),
    ([terminal(failed_turn(turn_error("futureVariant")))], False, "turn", "unknown"),
    ([terminal(failed_turn(turn_error("usageLimitExceeded"), status="interrupted"))], False, "turn", "unknown"),
    ([terminal(failed_turn(None, status="completed"))], False, "turn", "unknown"),
    ([process_exit(1, None)], False, "process", "process-exit"),
    ([_ANSWER, terminal(failed_turn(None, status="completed"))], True, "", ""),
]


@requirement("CDX-011", "CDX-012", "CDX-016", "CDX-022")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "stop_reasons"))
def test_stop_reason_of_each_situation(codex_outcome: Outcome, row: Json) -> None:
    """Each row of stop_reasons, deterministically."""
    events, cancelled, stage, category = _STOP_CASES[list(_SPEC.table("codex", "stop_reasons").rows).index(row)]
    request = scenario([response(), *events], cancelled=cancelled)
    output = [{"type": "text", "text": "answer"}] if events[0] is _ANSWER else []
    if row["stop_reason"] in ("completed", "aborted"):
        expected: Json = {"stopReason": row["stop_reason"], "output": output, "replies": []}
    else:
        exit_code = 1 if stage == "process" else None
        expected = ORACLE.failure("never", output, stage, category, exit_code=exit_code)
    assert expected["stopReason"] == row["stop_reason"], "the suite's case disagrees with its row"
    assert row.get("category") in (None, category), "the suite's case disagrees with its row"
    CHECKS.check(codex_outcome, request, expected)


_T, _U = {"threadId": THREAD_ID}, {"threadId": THREAD_ID, "turnId": TURN_ID}
_OTHER = terminal(failed_turn(turn_error("other")))
# One observation per row of notification_handling that fails (or, for a last step, passes) the
# row's check, keyed by (method, step), and what the row says follows: "fatal", "ignored" (the
# run goes on to a failed `other` terminal), or a named effect.
_NOTIFICATION_CASES: dict[tuple[str, int], tuple[list[Json], str]] = {
    ("turn/started", 1): ([notification("turn/started", {"threadId": 42, "turn": {"id": TURN_ID}})], "fatal"),
    ("turn/started", 2): ([notification("turn/started", {"threadId": "thread-2", "turn": None})], "ignored"),
    ("turn/started", 3): ([notification("turn/started", {**_T, "turn": None})], "fatal"),
    ("turn/started", 4): ([notification("turn/started", {**_T, "turn": {"id": ""}})], "fatal-early"),
    ("turn/started", 5): ([notification("turn/started", {**_T, "turn": {"id": TURN_ID}})], "ignored"),
    ("item/completed", 1): ([notification("item/completed", {"threadId": 42, "turnId": TURN_ID, "item": {}})], "fatal"),
    ("item/completed", 2): ([item_completed(None, thread_id="thread-2")], "ignored"),
    ("item/completed", 3): ([item_completed({"type": "plan"}, turn_id="")], "fatal"),
    ("item/completed", 4): ([agent_message("early", "final_answer")], "queued"),
    ("item/completed", 5): ([agent_message("foreign", "final_answer", turn_id="turn-2")], "ignored"),
    ("item/completed", 6): ([item_completed(None)], "fatal"),
    ("item/completed", 7): ([item_completed({"type": "commandExecution", "status": "declined"})], "declined"),
    ("item/completed", 8): ([item_completed({"type": "reasoning", "text": "x"})], "ignored"),
    ("item/completed", 9): ([agent_message(5, "final_answer")], "fatal"),
    ("item/completed", 10): ([agent_message("x", "summary")], "fatal"),
    ("turn/completed", 1): ([notification("turn/completed", {"threadId": 42, "turn": {"id": TURN_ID}})], "fatal"),
    ("turn/completed", 2): ([terminal(failed_turn(None, status="completed"), thread_id="thread-2")], "ignored"),
    ("turn/completed", 3): ([notification("turn/completed", {**_T, "turn": [1]})], "fatal"),
    ("turn/completed", 4): ([terminal({"id": "", "status": "completed"})], "fatal"),
    ("turn/completed", 5): ([_OTHER], "queued"),
    ("turn/completed", 6): ([terminal(failed_turn(None, "turn-2", status="completed"))], "ignored"),
    ("turn/completed", 7): ([terminal(failed_turn(None, status="inProgress"))], "fatal"),
    ("turn/completed", 8): ([_OTHER], "settles"),
}


@requirement("CDX-024", "CDX-025", "CDX-026", "CDX-028")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "notification_handling"))
def test_notification_handling_row(codex_outcome: Outcome, row: Json) -> None:
    """Each step of notification_handling, deterministically: a frame that fails its check (the
    last step: one that passes) and what the row says follows."""
    frames, effect = _NOTIFICATION_CASES[(row["method"], row["step"])]
    otherwise = str(row["otherwise"])
    assert effect.split("-")[0] != "fatal" or otherwise.startswith("fatal"), "the case disagrees with its row"
    assert effect != "ignored" or otherwise in ("the frame is ignored", "-"), "the case disagrees with its row"
    if effect == "fatal":
        request, expected = scenario([response(), *frames]), ORACLE.failure("never", [], "turn", "unknown")
    elif effect == "fatal-early":
        request, expected = scenario(frames), ORACLE.failure("never", [], "turn-start", "unknown")
    elif effect == "queued":  # before the turn/start response: queued, replayed at the commit
        request = scenario([*frames, response(), *([] if frames[0] is _OTHER else [_OTHER])])
        output = [] if frames[0] is _OTHER else [{"type": "text", "text": "early"}]
        expected = ORACLE.failure("never", output, "turn", "other")
    elif effect == "declined":
        request = scenario([response(), *frames, _OTHER])
        fact = ORACLE.fact_by_trigger("type commandExecution")
        expected = ORACLE.failure("never", [], "turn", "other", fact=fact)
    elif effect == "settles":
        request, expected = scenario([response(), *frames]), ORACLE.failure("never", [], "turn", "other")
    else:
        request, expected = scenario([response(), *frames, _OTHER]), ORACLE.failure("never", [], "turn", "other")
    CHECKS.check(codex_outcome, request, expected)
