"""The Codex provider driving a real app-server process: the run_codex operation.

Written as a provider runs @openai/codex 0.147.0's ``app-server`` over stdio: the child gets
its own process group (so the whole tree can be terminated), piped stdin/stdout/stderr, the
parent session's working directory and the configured environment. One reader thread per run
owns the pipes and observes everything in order: stdout lines, stderr chunks, the child's exit
(a pidfd, so that frames the child wrote before it exited are always read before its exit is
observed), and the commands of the other threads (local cancellation, dispose). Startup is the
initialize / initialized / ephemeral thread/start handshake; once the thread exists the run is
published, turn/start is written and the pure classifier of ``reference_impl.codex``
(``CodexRun``) turns what follows into the result. stderr is scanned by that classifier for its
two signatures and never copied anywhere.

Teardown (dispose(), and the rollback of a failed startup) closes the wire, ends stdin,
terminates the process group (SIGTERM, then SIGKILL after a short grace), waits until no
process of the group is left and then reaps the direct child. Every text start() or dispose()
rejects with is a fixed text or a failure line built from closed vocabularies
(``reference_impl.diagnostic``). The process group, its pipes (process.Pipes), the exit as Node
reports it, admission and the host's side of the operation are :mod:`reference_impl.process`,
shared with Claude Code.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import threading
import time
import uuid
from typing import Any

from reference_impl import process
from reference_impl.codex import CodexRun, is_blank, is_number, parse_line
from reference_impl.diagnostic import CODEX, ERROR_PREFIX, FailureFacts, rejection_text

Json = dict[str, Any]

PREFIX = ERROR_PREFIX[CODEX]
NO_WORKING_DIRECTORY = PREFIX + "no working directory for the child — delegate from a parent session that has one"
ONLY_TEXT_BLOCKS = PREFIX + "the one-shot task must contain only text blocks"
EMPTY_TASK = PREFIX + "the one-shot task must not be empty"
ABORTED_BEFORE_STARTUP = PREFIX + "request was aborted before app-server startup"
ABORTED_BEFORE_PUBLICATION = PREFIX + "request was aborted before run publication"

CLIENT_INFO = {"name": "deepseek-harness", "title": "DeepSeek Harness", "version": "0.0.1"}
CAPABILITIES = {"experimentalApi": False, "requestAttestation": False}
MODE_FIELDS: dict[str, Json] = {
    "never": {"approvalPolicy": "never"},
    "approve-for-me": {
        "approvalPolicy": "on-request",
        "approvalsReviewer": "auto_review",
        "sandbox": "workspace-write",
    },
    "dangerously-bypass-approvals-and-sandbox": {"approvalPolicy": "never", "sandbox": "danger-full-access"},
}
CONSUMED_NOTIFICATIONS = frozenset({"turn/started", "item/completed", "turn/completed"})

# How long the app-server gets to exit after SIGTERM before SIGKILL, and to exit after its stdout
# ended before the run settles without its outcome (CDX-046).
DISPOSAL_GRACE = 0.3
# A process group still alive this long after SIGKILL is beyond the provider's reach: the wait fails.
TREE_WAIT_LIMIT = 10.0
START_TEXTS = process.StartTexts(
    NO_WORKING_DIRECTORY,
    FailureFacts(CODEX, "initialize", "unknown").error_text(),
    ONLY_TEXT_BLOCKS,
    EMPTY_TASK,
    ABORTED_BEFORE_STARTUP,
)


class _StartupFailure(Exception):
    """Startup failed or was cancelled at ``stage``; the message is internal and never shown."""

    def __init__(self, stage: str, reason: str, *, cancelled: bool = False) -> None:
        super().__init__(reason)
        self.stage = stage
        self.cancelled = cancelled


class _WaitFailed(Exception):
    """Waiting for the process tree to exit failed (the message may hold anything: never shown)."""


# ---------------------------------------------------------------- one managed run


class CodexProcessRun:
    """One start() of the provider: admission, process.spawn, handshake, the published run, dispose()."""

    observed = staticmethod(process.outcome_of)  # an exit as Node.js reports it

    def __init__(self, request: Json, abort: process.AbortSignal) -> None:
        self.request = request
        self.argv: list[str] = request["argv"]
        self.cwd: str | None = request["cwd"]
        self.env: dict[str, str] = request["env"]
        self.mode: str = request["mode"]
        self.texts: list[str] = []
        self.faults = process.Faults(request)
        self.abort = abort
        self.stage = "initialize"
        self.child: subprocess.Popen[bytes] | None = None
        self.pipes: process.Pipes | None = None
        self.outcome: process.ProcessOutcome | None = None
        self.run: CodexRun | None = None
        self.early_stderr: list[str] = []
        self.turn_start_id: str | None = None
        self.turn_start_answered = False
        self.replies_written = 0
        self.interrupt_sent = False
        self.wire_open = True
        self.stdout_ended = False
        self.thread: threading.Thread | None = None
        self.startup_done = threading.Event()
        self.startup_error: BaseException | None = None
        self.result_ready = threading.Event()
        self.result_value: Json | None = None
        self.crash: BaseException | None = None
        self.dispose_lock = threading.Lock()
        self.dispose_settlement: Json | None = None

    # ---- start()

    def start(self) -> None:
        """Resolve once the run is published (the thread exists); raise process.StartRejected otherwise."""
        self.texts = process.admit(self.request, lambda: self.abort.aborted, START_TEXTS, is_blank)
        assert self.cwd is not None
        try:
            self.child = process.spawn(self.argv, self.cwd, self.env)
        except process.SpawnFailed:
            # No process exists, so nothing is terminated or waited for.
            if self.abort.aborted:
                raise process.StartRejected(ABORTED_BEFORE_PUBLICATION) from None
            raise process.StartRejected(FailureFacts(CODEX, "initialize", "unknown").error_text()) from None
        self.pipes = process.Pipes(self.child)
        self.abort.listen(self._on_abort)
        self.thread = threading.Thread(target=self._serve, name="codex-app-server", daemon=True)
        self.thread.start()
        self.startup_done.wait()
        failure = self.startup_error
        if failure is None:
            return
        self.thread.join()
        self.abort.forget(self._on_abort)
        if not isinstance(failure, _StartupFailure):
            self._teardown()
            raise failure
        startup = self._failure_facts(failure.stage)
        try:
            self._teardown()
        except _WaitFailed:
            raise process.StartRejected(rejection_text([startup, self._failure_facts("teardown")])) from None
        if failure.cancelled or self.abort.aborted:
            raise process.StartRejected(ABORTED_BEFORE_PUBLICATION) from None
        raise process.StartRejected(startup.error_text()) from None

    def _failure_facts(self, stage: str) -> FailureFacts:
        """A failure line's facts, with the process outcome observed so far (never a later one)."""
        outcome = self.outcome or process.ProcessOutcome(None, None)
        return FailureFacts(CODEX, stage, "unknown", exit_code=outcome.exit_code, signal=outcome.signal)

    def _on_abort(self) -> None:
        if self.pipes is not None:
            self.pipes.post("cancel")

    # ---- the reader thread

    def _serve(self) -> None:
        """The reader thread: startup, then the published run until dispose() closes the wire.
        A bug of this driver (any other exception) wakes every waiter and is re-raised there."""
        assert self.pipes is not None
        try:
            self._startup()
        except _StartupFailure as failure:
            self.pipes.gather_now()  # an exit that already happened is observed before rollback
            self._observe_exits()
            self.startup_error = failure
            self.startup_done.set()
            return
        except BaseException as exc:
            self.crash = self.startup_error = exc
            self.startup_done.set()
            return
        self.startup_done.set()
        try:
            self._published()
        except BaseException as exc:
            self.crash = exc
            self.result_ready.set()

    def _observe_exits(self) -> None:
        assert self.pipes is not None
        for event in self.pipes.pending:
            if isinstance(event, process.Exit):
                self._exited(event)

    def _write(self, frame: Json) -> None:
        assert self.child is not None and self.child.stdin is not None
        if not self.wire_open:
            return
        try:
            self.child.stdin.write((json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
            self.child.stdin.flush()
        except (OSError, ValueError):
            pass  # the app-server is gone; its exit or stdout end settles the run

    def _request(self, method: str, params: Json) -> str:
        request_id = f"req_{uuid.uuid4().hex}"
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    # ---- startup

    def _startup(self) -> None:
        response = self._await_response(
            self._request("initialize", {"clientInfo": CLIENT_INFO, "capabilities": CAPABILITIES})
        )
        if not isinstance(response.get("result"), dict):
            raise _StartupFailure(self.stage, "invalid initialize response")
        self._write({"jsonrpc": "2.0", "method": "initialized"})
        self.stage = "thread-start"
        params = {"cwd": self.cwd, "ephemeral": True, **MODE_FIELDS[self.mode]}
        response = self._await_response(self._request("thread/start", params))
        result = response.get("result")
        thread = result.get("thread") if isinstance(result, dict) else None
        if not isinstance(thread, dict) or not isinstance(thread.get("id"), str) or not thread["id"]:
            raise _StartupFailure(self.stage, "invalid thread/start thread")
        if thread.get("ephemeral") is not True:
            raise _StartupFailure(self.stage, "the app-server did not create an ephemeral thread")
        if self.abort.aborted:
            raise _StartupFailure(self.stage, "cancelled", cancelled=True)
        # Published: from here on every failure is the run's result.
        self.run = CodexRun(self.mode, thread["id"])
        for chunk in self.early_stderr:
            self.run.on_stderr(chunk)
        self.stage = "turn-start"
        inputs = [{"type": "text", "text": text, "text_elements": []} for text in self.texts]
        self.turn_start_id = self._request("turn/start", {"threadId": thread["id"], "input": inputs})

    def _await_response(self, request_id: str) -> Json:
        """The app-server's response to a startup request; anything else that settles startup raises."""
        assert self.pipes is not None
        while True:
            event = self.pipes.next(None)
            if isinstance(event, process.Stderr):
                self._stderr(event.text)
            elif isinstance(event, process.Exit):
                self._exited(event)
                raise _StartupFailure(self.stage, "the app-server exited")
            elif isinstance(event, process.StdoutEnd):
                self.stdout_ended = True
                self._await_exit()
                raise _StartupFailure(self.stage, "the app-server closed its stdout")
            elif isinstance(event, process.Command):
                if event.name == "cancel":
                    raise _StartupFailure(self.stage, "cancelled", cancelled=True)
            elif isinstance(event, process.Line):
                response = self._startup_frame(event.text, request_id)
                if response is not None:
                    return response

    def _startup_frame(self, line: str, request_id: str) -> Json | None:
        try:
            frame = parse_line(line)
        except ValueError:
            return None
        if not isinstance(frame, dict):
            return None
        frame_id, method = frame.get("id"), frame.get("method")
        has_id = isinstance(frame_id, str) or is_number(frame_id)
        if has_id and isinstance(method, str):
            # No thread or turn exists yet, so no server request can be answered.
            self._write({"jsonrpc": "2.0", "id": frame_id, "error": {"code": -32603, "message": "internal error"}})
            raise _StartupFailure(self.stage, "app-server request before turn/start")
        if has_id:
            if frame_id != request_id:
                return None
            if isinstance(frame.get("error"), dict):
                raise _StartupFailure(self.stage, "error response")
            return frame
        params = frame.get("params")
        if method in CONSUMED_NOTIFICATIONS:
            thread_id = params.get("threadId") if isinstance(params, dict) else None
            if not isinstance(thread_id, str) or not thread_id:
                raise _StartupFailure(self.stage, "notification with an invalid thread id")
        return None

    def _await_exit(self) -> bool:
        """After stdout ended: give the app-server the grace to exit, and observe it if it does.
        False when a command (cancellation, dispose) came first: the caller handles it."""
        assert self.pipes is not None
        deadline = time.monotonic() + DISPOSAL_GRACE
        while self.outcome is None:
            event = self.pipes.next(max(0.0, deadline - time.monotonic()))
            if event is None:
                break
            if isinstance(event, process.Exit):
                self._exited(event)
            elif isinstance(event, process.Stderr):
                self._stderr(event.text)
            elif isinstance(event, process.Command):
                self.pipes.pending.appendleft(event)
                return False
        return True

    def _exited(self, event: process.Exit) -> None:
        """The app-server's exit is observed: its outcome is known from now on."""
        self.outcome = self.observed(event.returncode)
        if self.run is not None:
            self.run.on_exit(self.outcome.exit_code, self.outcome.signal)

    def _stderr(self, chunk: str) -> None:
        """A stderr chunk: scanned for the two signatures by the published run (replayed into it
        when it is published later), never kept or copied otherwise."""
        if self.run is not None:
            self.run.on_stderr(chunk)
        else:
            self.early_stderr.append(chunk)

    # ---- the published run

    def _published(self) -> None:
        assert self.pipes is not None and self.run is not None
        run = self.run
        while True:
            event = self.pipes.next(None)
            if isinstance(event, process.Line):
                if self.result_value is None:
                    self._frame(event.text)
            elif isinstance(event, process.Stderr):
                self._stderr(event.text)
            elif isinstance(event, process.Exit):
                self._exited(event)
            elif isinstance(event, process.StdoutEnd):
                self.stdout_ended = True
                run.on_stdout_end()
                if self.result_value is None and self._await_exit() and run.settled is None:
                    self._take_result()  # no exit within the grace: the current stage, unknown
            elif isinstance(event, process.Command):
                if self.result_value is None:
                    self._cancel_locally()
                if event.name == "close":
                    self.wire_open = False
                    return
            if self.result_value is None and (run.settled is not None or run.cancelled):
                self._take_result()

    def _frame(self, line: str) -> None:
        assert self.run is not None
        response = self._turn_start_response(line)
        if response is not None:
            self.turn_start_answered = True
            self.stage = "turn"
            self.run.on_turn_start_response(response)
        else:
            self.run.on_stdout_line(line)
        for reply in self.run.replies[self.replies_written :]:
            self._write({"jsonrpc": "2.0", **reply})
        self.replies_written = len(self.run.replies)

    def _turn_start_response(self, line: str) -> Json | None:
        if self.turn_start_answered:
            return None
        try:
            frame = parse_line(line)
        except ValueError:
            return None
        if (
            isinstance(frame, dict)
            and frame.get("id") == self.turn_start_id
            and not isinstance(frame.get("method"), str)
        ):
            return frame
        return None

    def _cancel_locally(self) -> None:
        """Local cancellation before the result settled: aborted, and one turn/interrupt if the ids are known."""
        assert self.run is not None
        self.run.cancel()
        if self.run.turn_id is not None and not self.interrupt_sent:
            self.interrupt_sent = True
            self._request("turn/interrupt", {"threadId": self.run.thread_id, "turnId": self.run.turn_id})
        self._take_result()

    def _take_result(self) -> None:
        """Settle the result, after what is already queued (stderr, an exit) has been observed."""
        assert self.pipes is not None and self.run is not None
        self.pipes.gather_now()
        for event in [e for e in self.pipes.pending if isinstance(e, process.Stderr | process.Exit)]:
            self.pipes.pending.remove(event)
            if isinstance(event, process.Stderr):
                self._stderr(event.text)
            else:
                self._exited(event)
        settled = self.run.result()
        settled.pop("replies")
        self.result_value = settled
        self.result_ready.set()

    # ---- the result and dispose()

    def result(self) -> Json:
        self.result_ready.wait()
        if self.crash is not None:
            raise self.crash
        assert self.result_value is not None
        return self.result_value

    def dispose(self) -> Json:
        """Cancel locally, close the wire, tear the tree down; the same settlement every time."""
        with self.dispose_lock:
            if self.dispose_settlement is None:
                self.dispose_settlement = self._dispose()
            return self.dispose_settlement

    def _dispose(self) -> Json:
        assert self.pipes is not None and self.thread is not None
        self.abort.forget(self._on_abort)
        self.pipes.post("close")
        self.thread.join()
        if self.crash is not None:
            self._teardown()
            raise self.crash
        try:
            self._teardown()
        except _WaitFailed:
            return {"rejected": self._failure_facts("teardown").error_text()}
        return {"resolved": True}

    def _teardown(self) -> None:
        """End stdin, terminate the group, wait until it is gone, reap the child; raise _WaitFailed."""
        assert self.child is not None and self.pipes is not None
        self.wire_open = False
        self.stage = "teardown"
        child, pgid = self.child, self.child.pid
        try:
            if child.stdin is not None:
                child.stdin.close()
        except OSError:
            pass  # an error ending stdin is contained
        process.signal_group(pgid, signal.SIGTERM)
        try:
            self.faults.check("tree_wait", _WaitFailed)
            self._wait_tree(pgid)
            child.wait()
        except _WaitFailed:
            self._release(pgid)
            raise
        finally:
            self._close_pipes()

    def _wait_tree(self, pgid: int) -> None:
        """Until no process of the group runs: SIGKILL after the grace, fail after the limit."""
        child = self.child
        assert child is not None
        kill_at = time.monotonic() + DISPOSAL_GRACE
        if not process.wait_group(
            pgid, lambda: child.poll() is not None, kill_at=kill_at, give_up_at=kill_at + TREE_WAIT_LIMIT
        ):
            raise _WaitFailed("the process tree did not exit")

    def _release(self, pgid: int) -> None:
        """After a failed wait, still leave nothing running: kill the group and reap what is ours."""
        assert self.child is not None
        now = time.monotonic()
        process.wait_group(pgid, lambda: True, kill_at=now, give_up_at=now + TREE_WAIT_LIMIT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.child.wait(timeout=max(0.0, now + TREE_WAIT_LIMIT - time.monotonic()))

    def _close_pipes(self) -> None:
        assert self.child is not None and self.pipes is not None
        for stream in (self.child.stdout, self.child.stderr):
            if stream is not None:
                stream.close()
        self.pipes.close()


# ---------------------------------------------------------------- the operation


def run_codex(request: Json, run_class: type[CodexProcessRun] = CodexProcessRun) -> Json:
    """The run_codex operation: start every run so that they overlap, then settle and dispose each."""
    return {"runs": process.run_batch(request["runs"], run_class)}
