"""The Codex provider's wire client for one published run (app-server of @openai/codex 0.147.0).

A run is published once thread/start succeeded and turn/start is in flight. From then on the
client reads newline-delimited JSON-RPC frames from the app-server's stdout, answers server
requests at once without granting anything, scans stderr for two fixed signatures, watches the
managed process, and settles one SubagentResult: the answer (or the partial answer) plus, for a
failure, one fixed diagnostic line built only from closed vocabularies, followed by the latest
unattended permission fact. No product text (messages, details, commands, stderr, ids) is ever
copied into a diagnostic: raw failures stay in the internal exception, which never leaves.

``CodexRun`` folds those observations into the result; reading the wire, the error-info union,
the permission facts and the printed lines are ``codex_wire``, ``codex_errors``,
``codex_permissions`` and ``codex_diagnostic``. ``codex_outcome`` replays a scenario (what the
provider observed, in order) through ``CodexRun``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_impl.codex_diagnostic import Failure as Failure
from reference_impl.codex_diagnostic import Stage, failure_line, permission_line
from reference_impl.codex_errors import BASE_VERSION, classify, http_status, string_variants
from reference_impl.codex_permissions import (
    COMMAND_ITEM_DECLINED,
    ELICITATION,
    FILE_ITEM_DECLINED,
    SANDBOX_FAILURE,
    SERVER_REQUESTS,
    scan_stderr,
    unattended_reply,
)
from reference_impl.codex_permissions import PermissionFact as PermissionFact
from reference_impl.codex_wire import (
    ProtocolFailure,
    internal_error,
    is_blank,
    is_number,
    json_object,
    non_empty_string,
    parse_line,
)
from reference_impl.diagnostic import bound_diagnostic
from reference_impl.process import ProcessOutcome

Json = dict[str, Any]

TERMINAL_STATUSES = frozenset({"completed", "interrupted", "failed"})


@dataclass(frozen=True)
class Completed:
    """A matching completed terminal with a non-blank answer."""


class CodexRun:
    """The client side of one published run: turn/start is in flight when it is created."""

    version = BASE_VERSION  # the @openai/codex version whose union the run maps (productVersion)

    def __init__(self, mode: str, thread_id: str) -> None:
        self.mode = mode
        self.thread_id = thread_id
        self.turn_id: str | None = None  # committed by the turn/start response
        self.provisional_turn_id: str | None = None
        self.early_frames: list[tuple[str, Json, int]] = []
        self.deferred_fact: tuple[PermissionFact, int] | None = None
        self.last_final: str | None = None
        self.last_unphased: str | None = None
        self.fact: PermissionFact | None = None
        self.fact_order = 0
        self.observations = 0
        self.stderr_tail = ""
        self.replies: list[Json] = []
        self.settled: Failure | Completed | None = None
        self.stdout_ended = False
        self.outcome: ProcessOutcome | None = None
        self.cancelled = False

    # ---- observation order and permission facts

    def next_order(self) -> int:
        self.observations += 1
        return self.observations

    def record_fact(self, fact: PermissionFact, order: int) -> None:
        """Keep the latest fact by observation order (a replayed early fact never wins over a later one)."""
        if order >= self.fact_order:
            self.fact_order = order
            self.fact = fact

    # ---- what the provider observes

    def on_turn_start_response(self, response: Json) -> None:
        self.next_order()
        if self.settled is not None:
            return
        try:
            if isinstance(response.get("error"), dict):
                raise ProtocolFailure("subagent-codex: turn/start failed")
            result = json_object(response.get("result"), "turn/start response")
            turn = json_object(result.get("turn"), "turn/start turn")
            self.commit_turn(non_empty_string(turn.get("id"), "turn/start turn id"))
        except ProtocolFailure:
            self.fail("turn-start")

    def commit_turn(self, turn_id: str) -> None:
        if self.provisional_turn_id is not None and self.provisional_turn_id != turn_id:
            raise ProtocolFailure("subagent-codex: turn/start response did not match the active turn")
        self.turn_id = turn_id
        deferred, self.deferred_fact = self.deferred_fact, None
        if deferred is not None:
            self.record_fact(*deferred)
        queued, self.early_frames = self.early_frames, []
        for method, params, order in queued:  # replayed inside the turn/start exchange
            if self.settled is not None:
                break
            self.handle_notification(method, params, order)

    def on_stdout_line(self, line: str) -> None:
        order = self.next_order()
        if self.settled is not None or self.stdout_ended:
            return
        try:
            frame = parse_line(line)
        except ValueError:
            return  # blank, foreign or broken lines are not frames
        if not isinstance(frame, dict):
            return
        frame_id = frame.get("id")
        method = frame.get("method")
        has_id = isinstance(frame_id, str) or is_number(frame_id)
        params = frame.get("params")
        if not isinstance(params, dict):
            params = {}
        if has_id and isinstance(method, str):
            self.handle_server_request(frame_id, method, params, order)
        elif isinstance(method, str) and not has_id:
            stage = self.stage()
            try:
                self.handle_notification(method, params, order)
            except ProtocolFailure:
                self.fail(stage)
        # a response: the only request in flight is turn/start, whose answer arrives separately

    def on_stderr(self, chunk: str) -> None:
        """A stderr chunk: only the two signatures are looked for, and only their possible start is kept."""
        order = self.next_order()
        latest, self.stderr_tail = scan_stderr(self.stderr_tail, chunk)
        if latest is not None:
            self.record_fact(latest, order)

    def on_stdout_end(self) -> None:
        self.stdout_ended = True  # settles at result time unless the process exits within the grace

    def on_exit(self, exit_code: int | None, signal: str | None) -> None:
        if self.outcome is not None:
            return
        self.outcome = ProcessOutcome(exit_code, signal)
        if self.settled is None:
            self.settled = Failure("process", "process-exit")

    def on_exit_unobservable(self) -> None:
        if self.settled is None:
            self.settled = Failure("process", "unknown")

    def cancel(self) -> None:
        self.cancelled = True

    # ---- frame handling

    def stage(self) -> Stage:
        return "turn" if self.turn_id is not None else "turn-start"

    def fail(self, stage: Stage, category: str = "unknown", status: int | None = None) -> None:
        if self.settled is None:
            self.settled = Failure(stage, category, status)

    def observe_provisional(self, turn_id: str) -> None:
        if self.provisional_turn_id is not None and self.provisional_turn_id != turn_id:
            raise ProtocolFailure("subagent-codex: app-server referenced conflicting turns")
        self.provisional_turn_id = turn_id

    def handle_notification(self, method: str, params: Json, order: int) -> None:
        if method == "turn/started":
            if non_empty_string(params.get("threadId"), "turn/started thread id") != self.thread_id:
                return
            turn = json_object(params.get("turn"), "turn/started turn")
            if self.turn_id is None:
                self.observe_provisional(non_empty_string(turn.get("id"), "turn/started turn id"))
        elif method == "item/completed":
            if non_empty_string(params.get("threadId"), "item/completed thread id") != self.thread_id:
                return
            turn_id = non_empty_string(params.get("turnId"), "item/completed turn id")
            if self.deferred_or_foreign(turn_id, method, params, order):
                return
            self.handle_item(json_object(params.get("item"), "item/completed item"), order)
        elif method == "turn/completed":
            if non_empty_string(params.get("threadId"), "turn/completed thread id") != self.thread_id:
                return
            turn = json_object(params.get("turn"), "turn/completed turn")
            turn_id = non_empty_string(turn.get("id"), "turn/completed turn id")
            if self.deferred_or_foreign(turn_id, method, params, order):
                return
            status = turn.get("status")
            if not isinstance(status, str) or status not in TERMINAL_STATUSES:
                raise ProtocolFailure("subagent-codex: app-server returned an invalid terminal turn status")
            self.settle_terminal(turn, status, order)
        # every other notification, the `error` notification included, is not the provider's business

    def deferred_or_foreign(self, turn_id: str, method: str, params: Json, order: int) -> bool:
        """Before the turn/start response, a frame fixes the provisional turn id and is queued for
        replay; after it, a frame of another turn is none of this run's business."""
        if self.turn_id is None:
            self.observe_provisional(turn_id)
            self.early_frames.append((method, params, order))
            return True
        return turn_id != self.turn_id

    def handle_item(self, item: Json, order: int) -> None:
        kind = item.get("type")
        if kind in ("commandExecution", "fileChange") and item.get("status") == "declined":
            self.record_fact(COMMAND_ITEM_DECLINED if kind == "commandExecution" else FILE_ITEM_DECLINED, order)
            return
        if kind != "agentMessage":
            return
        text = item.get("text")
        if not isinstance(text, str):
            raise ProtocolFailure("subagent-codex: app-server returned an invalid agent message")
        phase = item.get("phase", ...)  # a missing key is not null
        if phase == "final_answer":
            self.last_final = text
        elif phase is None:
            self.last_unphased = text
        elif phase != "commentary":
            raise ProtocolFailure("subagent-codex: app-server returned an unknown agent message phase")

    def settle_terminal(self, turn: Json, status: str, order: int) -> None:
        if status == "completed":
            if self.output():
                self.settled = Completed()
            else:
                self.fail("turn")  # completed without a final answer
            return
        if status == "interrupted":
            self.fail("turn")  # a remote interruption; local cancellation is decided elsewhere
            return
        category, code = self.failure_info(turn)
        if category == "sandboxError":
            self.record_fact(SANDBOX_FAILURE, order)
        self.fail("turn", category, code)

    def failure_info(self, turn: Json) -> tuple[str, int | None]:
        """The category (and kept HTTP status) of a failed terminal; anything outside the union is unknown."""
        return classify(turn.get("error"), self.status_code, string_variants(self.version))

    @staticmethod
    def status_code(value: Any) -> int | None:
        return http_status(value)

    # ---- server requests

    def handle_server_request(self, request_id: Any, method: str, params: Json, order: int) -> None:
        stage = self.stage()
        try:
            result, fact, provisional = self.answer(method, params)
        except ProtocolFailure:
            self.replies.append(internal_error(request_id))
            self.fail(stage)
            return
        self.replies.append({"id": request_id, "result": result})
        if provisional:
            self.deferred_fact = (fact, order)
        else:
            self.record_fact(fact, order)

    def answer(self, method: str, params: Json) -> tuple[Json, PermissionFact, bool]:
        """The reply to a supported request, the fact it records, and whether its turn is provisional
        (the ids are checked before the reply is chosen)."""
        if method not in SERVER_REQUESTS:
            raise ProtocolFailure("subagent-codex: unsupported app-server request")
        provisional = self.check_run_ids(params, turn_may_be_null=method == ELICITATION)
        reply, fact = unattended_reply(method, params)
        return reply, fact, provisional

    def check_run_ids(self, params: Json, *, turn_may_be_null: bool = False) -> bool:
        if params.get("threadId") != self.thread_id:
            raise ProtocolFailure("subagent-codex: app-server request referenced another thread")
        if turn_may_be_null and "turnId" in params and params["turnId"] is None:
            return False
        turn_id = non_empty_string(params.get("turnId"), "server request turn id")
        if self.turn_id is None:
            self.observe_provisional(turn_id)
            return True
        if turn_id != self.turn_id:
            raise ProtocolFailure("subagent-codex: app-server request referenced another turn")
        return False

    # ---- the result

    def output(self) -> list[Json]:
        selected = self.last_final if self.last_final is not None else self.last_unphased
        return [{"type": "text", "text": selected}] if selected is not None and not is_blank(selected) else []

    def stop_reason(self, failure: Failure) -> str:
        return "max-tokens" if failure.category == "contextWindowExceeded" else "error"

    def diagnostic(self, failure: Failure) -> str:
        text = failure_line(failure, self.outcome)
        if self.fact is not None:
            text += "\n" + permission_line(self.mode, self.fact)
        return bound_diagnostic(text)

    def result(self) -> Json:
        """The settled result and the replies written to the app-server."""
        replies = [{"id": r["id"], "error": {"code": r["error"]["code"]}} if "error" in r else r for r in self.replies]
        if self.cancelled:
            return {"stopReason": "aborted", "output": self.output(), "replies": replies}
        settled = self.settled
        if settled is None and self.stdout_ended:
            settled = Failure(self.stage(), "unknown")  # no exit within the grace
        if settled is None:
            raise ValueError("the scenario never settles and is not cancelled")
        if isinstance(settled, Completed):
            return {"stopReason": "completed", "output": self.output(), "replies": replies}
        return {
            "stopReason": self.stop_reason(settled),
            "output": self.output(),
            "diagnostic": self.diagnostic(settled),
            "replies": replies,
        }


def observe(run: CodexRun, event: Json) -> None:
    """Feed one observation of a scenario to the run."""
    if "turn_start" in event:
        run.on_turn_start_response(event["turn_start"])
    elif "frame" in event:
        run.on_stdout_line(json.dumps(event["frame"]))
    elif "line" in event:
        run.on_stdout_line(event["line"])
    elif "stderr" in event:
        run.on_stderr(event["stderr"])
    elif "stdout_end" in event:
        run.on_stdout_end()
    elif "exit" in event:
        run.on_exit(event["exit"]["exitCode"], event["exit"]["signal"])
    elif "exit_unobservable" in event:
        run.on_exit_unobservable()


def codex_outcome(request: Json, run_class: Callable[[str, str], CodexRun] = CodexRun) -> Json:
    """A scenario of codex.yaml's outcome_vectors -> the settled result and the replies sent."""
    run = run_class(request["mode"], request["thread_id"])
    run.version = request.get("productVersion", run.version)
    for event in request["events"]:
        observe(run, event)
    if request.get("cancelled", False):
        run.cancel()
    return run.result()
