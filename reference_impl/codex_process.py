"""The Codex provider driving a real app-server process: the run_codex operation.

Written as a provider runs @openai/codex 0.147.0's ``app-server`` over stdio: the child gets
its own process group (so the whole tree can be terminated), piped stdin/stdout/stderr, the
parent session's working directory and the configured environment. One reader thread per run
owns the pipes and observes everything in order: stdout lines, stderr chunks, the child's exit
(a pidfd, so that frames the child wrote before it exited are always read before its exit is
observed), and the commands of the other threads (local cancellation, dispose). What it says
to the app-server and how it reads the answers (the startup handshake, then the published run's
frames through the pure classifier ``CodexRun``) is :mod:`reference_impl.codex_client`.

Teardown (dispose(), and the rollback of a failed startup) closes the wire, ends stdin,
terminates the process group (SIGTERM, then SIGKILL after a short grace), waits until no
process of the group is left and then reaps the direct child. Every text start() or dispose()
rejects with is a fixed text or a failure line built from closed vocabularies
(``reference_impl.diagnostic``). The process group, its pipes, the exit as Node reports it,
admission and the host's side of the operation are shared with Claude Code
(``reference_impl.process`` and its siblings).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from typing import Any

from reference_impl.codex_client import DISPOSAL_GRACE, AppServerClient, StartupFailure
from reference_impl.codex_errors import BASE_VERSION
from reference_impl.codex_wire import is_blank
from reference_impl.diagnostic import CODEX, ERROR_PREFIX, FailureFacts, rejection_text
from reference_impl.process import Command, Exit, Line, Pipes, ProcessOutcome, Stderr, StdoutEnd
from reference_impl.process_admission import StartRejected, StartTexts, admit
from reference_impl.process_host import AbortSignal, Faults, run_batch
from reference_impl.process_tree import SpawnFailed, signal_group, spawn, wait_group

Json = dict[str, Any]

PREFIX = ERROR_PREFIX[CODEX]
NO_WORKING_DIRECTORY = PREFIX + "no working directory for the child — delegate from a parent session that has one"
ONLY_TEXT_BLOCKS = PREFIX + "the one-shot task must contain only text blocks"
EMPTY_TASK = PREFIX + "the one-shot task must not be empty"
ABORTED_BEFORE_STARTUP = PREFIX + "request was aborted before app-server startup"
ABORTED_BEFORE_PUBLICATION = PREFIX + "request was aborted before run publication"

# A process group still alive this long after SIGKILL is beyond the provider's reach: the wait fails.
TREE_WAIT_LIMIT = 10.0
START_TEXTS = StartTexts(
    NO_WORKING_DIRECTORY,
    FailureFacts(CODEX, "initialize", "unknown").error_text(),
    ONLY_TEXT_BLOCKS,
    EMPTY_TASK,
    ABORTED_BEFORE_STARTUP,
)


class _WaitFailed(Exception):
    """Waiting for the process tree to exit failed (the message may hold anything: never shown)."""


# ---------------------------------------------------------------- one managed run


class CodexProcessRun(AppServerClient):
    """One start() of the provider: admission, spawn, handshake, the published run, dispose()."""

    def __init__(self, request: Json, abort: AbortSignal) -> None:
        super().__init__(request["mode"], request["cwd"], abort)
        self.request = request
        self.argv: list[str] = request["argv"]
        self.env: dict[str, str] = request["env"]
        self.faults = Faults(request)
        self.interrupt_sent = False
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
        """Resolve once the run is published (the thread exists); raise StartRejected otherwise."""
        self.texts = admit(self.request, lambda: self.abort.aborted, START_TEXTS, is_blank)
        assert self.cwd is not None
        try:
            self.child = spawn(self.argv, self.cwd, self.env)
        except SpawnFailed:
            # No process exists, so nothing is terminated or waited for.
            if self.abort.aborted:
                raise StartRejected(ABORTED_BEFORE_PUBLICATION) from None
            raise StartRejected(FailureFacts(CODEX, "initialize", "unknown").error_text()) from None
        self.pipes = Pipes(self.child)
        self.abort.listen(self._on_abort)
        self.thread = threading.Thread(target=self._serve, name="codex-app-server", daemon=True)
        self.thread.start()
        self.startup_done.wait()
        failure = self.startup_error
        if failure is None:
            return
        self.thread.join()
        self.abort.forget(self._on_abort)
        if not isinstance(failure, StartupFailure):
            self._teardown()
            raise failure
        startup = self._failure_facts(failure.stage)
        try:
            self._teardown()
        except _WaitFailed:
            raise StartRejected(rejection_text([startup, self._failure_facts("teardown")])) from None
        if failure.cancelled or self.abort.aborted:
            raise StartRejected(ABORTED_BEFORE_PUBLICATION) from None
        raise StartRejected(startup.error_text()) from None

    def _failure_facts(self, stage: str) -> FailureFacts:
        """A failure line's facts, with the process outcome observed so far (never a later one)."""
        outcome = self.outcome or ProcessOutcome(None, None)
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
        except StartupFailure as failure:
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
            if isinstance(event, Exit):
                self._exited(event)

    # ---- the published run

    def _published(self) -> None:
        assert self.pipes is not None and self.run is not None
        run = self.run
        while True:
            event = self.pipes.next(None)
            if isinstance(event, Line):
                if self.result_value is None:
                    self._frame(event.text)
            elif isinstance(event, Stderr):
                self._stderr(event.text)
            elif isinstance(event, Exit):
                self._exited(event)
            elif isinstance(event, StdoutEnd):
                self.stdout_ended = True
                run.on_stdout_end()
                if self.result_value is None and self._await_exit() and run.settled is None:
                    self._take_result()  # no exit within the grace: the current stage, unknown
            elif isinstance(event, Command):
                if self.result_value is None:
                    self._cancel_locally()
                if event.name == "close":
                    self.wire_open = False
                    return
            if self.result_value is None and (run.settled is not None or run.cancelled):
                self._take_result()

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
        for event in [e for e in self.pipes.pending if isinstance(e, Stderr | Exit)]:
            self.pipes.pending.remove(event)
            if isinstance(event, Stderr):
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
        signal_group(pgid, signal.SIGTERM)
        try:
            self._wait_tree(pgid)
            self.faults.check("tree_wait", _WaitFailed)  # the wait was performed, then fails
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
        if not wait_group(
            pgid, lambda: child.poll() is not None, kill_at=kill_at, give_up_at=kill_at + TREE_WAIT_LIMIT
        ):
            raise _WaitFailed("the process tree did not exit")

    def _release(self, pgid: int) -> None:
        """After a failed wait, still leave nothing running: kill the group and reap what is ours."""
        assert self.child is not None
        now = time.monotonic()
        wait_group(pgid, lambda: True, kill_at=now, give_up_at=now + TREE_WAIT_LIMIT)
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
    version = request.get("productVersion", BASE_VERSION)

    def make(run: Json, abort: AbortSignal) -> CodexProcessRun:
        managed = run_class(run, abort)
        managed.version = version
        return managed

    return {"runs": run_batch(request["runs"], make)}
