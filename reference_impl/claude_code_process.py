"""The Claude Code provider as a real driver of a managed CLI process (operation run_claude_code).

Written the way a provider drives the Claude Agent SDK and the CLI it spawns: the run owns
one process group (``start_new_session``), talks stream-json over pipes (the SDK's control
protocol: the ``initialize`` handshake, the task as a user message, permission control
requests answered at once without granting), observes stderr without ever copying it into
a result, and knows its stage at every step. The outcome rules are not restated here: the
SDK messages it reads go through :class:`reference_impl.claude_code.ClaudeCodeRun`, the
same classifier the pure operation uses.

Startup is SDK query construction and the spawn; as the SDK's query() does, the run writes
the ``initialize`` control request and the task without waiting for an answer, and is
published as soon as the query exists with a live CLI (CC-035): a CLI that fails after that,
answering ``initialize`` or not, fails the run's result, never start(). dispose() closes the query,
terminates the group (SIGTERM, then SIGKILL after a short grace), waits until no process of
the group is alive and awaits the direct child's final outcome; it is memoized.

The CLI's process handle is :mod:`reference_impl.claude_code_cli`, the SDK's side of the wire
:mod:`reference_impl.claude_code_sdk`. The process group, its pipes read in the order things
happened, the exit as Node reports it, admission and the host's side of the operation (every
run of one call started before any is disposed) are :mod:`reference_impl.process` and its
siblings, shared with the Codex driver.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NoReturn

from reference_impl import claude_code
from reference_impl.claude_code import ClaudeCodeRun
from reference_impl.claude_code_cli import ManagedProcess as ManagedProcess
from reference_impl.claude_code_sdk import STREAM_JSON_FLAGS, sdk_environment, valued
from reference_impl.claude_code_sdk import Query as Query
from reference_impl.claude_code_sdk import StartupFailure as StartupFailure
from reference_impl.diagnostic import CLAUDE_CODE, ERROR_PREFIX
from reference_impl.process import ProcessOutcome
from reference_impl.process_admission import StartRejected, StartTexts, admit
from reference_impl.process_host import AbortSignal, Faults, run_batch
from reference_impl.process_tree import SpawnFailed

Json = dict[str, Any]

STAGE_START, STAGE_RUN, STAGE_TEARDOWN = "query-start", "query-run", "teardown"
AGGREGATE_SEPARATOR = "; "  # a failed rollback joins the startup text and the teardown text

NO_CWD = "subagent-claude-code: no working directory for the child — delegate from a parent session that has one"
NOT_TEXT = "subagent-claude-code: the one-shot task must contain only text blocks"
EMPTY_TASK = "subagent-claude-code: the one-shot task must not be empty"
ABORTED = "subagent-claude-code: request was aborted before SDK startup"


class TeardownFailure(Exception):
    """A teardown step failed; ``outcome`` is the direct child's final outcome, if obtained."""

    def __init__(self, failures: list[BaseException], outcome: ProcessOutcome | None) -> None:
        super().__init__("Claude Code teardown failures")
        self.failures = failures
        self.outcome = outcome


# --------------------------------------------------------------------------- one managed run


class ClaudeCodeProcessRun:
    """One start(), its result and its dispose(), as a provider runs them."""

    run_class: type[ClaudeCodeRun] = ClaudeCodeRun
    process_class: type[ManagedProcess] = ManagedProcess
    query_class: type[Query] = Query

    def __init__(self, request: Json, request_signal: AbortSignal) -> None:
        self.request = request
        self.mode: str = request["mode"]
        self.faults = Faults(request)
        self.run = self.run_class(self.mode)
        self.stage = STAGE_START
        self.request_signal = request_signal
        self.aborted = threading.Event()  # the run's own controller
        self.process: ManagedProcess | None = None
        self.query: Query | None = None
        self.result_value: Json | None = None
        self.settled = threading.Event()
        self.disposal: Json | None = None
        self._dispose_lock = threading.Lock()
        self._consumer: threading.Thread | None = None
        request_signal.listen(self.cancel_request)

    # ---- cancellation

    def request_aborted(self) -> bool:
        return self.request_signal.aborted

    def cancel_request(self) -> None:
        """The request's signal aborts; it cancels the run locally until the result settled."""
        if not self.settled.is_set():
            self.abort()

    def abort(self) -> None:
        """The run's controller: wake the SDK and have it terminate the CLI, as the SDK does."""
        if self.aborted.is_set():
            return
        self.aborted.set()
        if self.query is not None:
            self.query.wake()
        if self.process is not None:
            self.process.terminate()

    # ---- texts

    def error_text(self, stage: str, category: str, outcome: ProcessOutcome | None) -> str:
        return ERROR_PREFIX[CLAUDE_CODE] + self.run.failure_line(stage, category, outcome)

    # ---- start()

    def start(self) -> None:
        """Resolve once the query exists with a live CLI (CC-035); raise StartRejected otherwise."""
        unusable = self.error_text(self.stage, "unknown", None)
        texts = StartTexts(NO_CWD, unusable, NOT_TEXT, EMPTY_TASK, ABORTED)
        prompt = "".join(admit(self.request, self.request_aborted, texts, claude_code.is_blank))
        argv = [*self.request["argv"], *self.flags()]
        env = self.environment()
        try:
            self.process = self.process_class(argv, self.request["cwd"], env)
        except SpawnFailed:
            self.spawn_failed()
        assert self.process is not None
        self.query = self.query_class(self.process, self.run, self.aborted)
        try:
            if self.request_aborted():
                self.abort()  # cancelled while the query and the CLI were being created
            self.query.open()
            if "query_construction" in self.faults.steps:
                self.query.first_output()
                self.faults.check("query_construction", StartupFailure)
            if self.aborted.is_set():
                raise StartupFailure("aborted during startup")
        except StartupFailure:
            self.roll_back()
        self.query.send_task(prompt)
        self.stage = STAGE_RUN
        self._consumer = threading.Thread(target=self.consume, name="claude-code-consumer", daemon=True)
        self._consumer.start()

    def environment(self) -> dict[str, str]:
        """The configured environment with the SDK's own variables of the claimed release over it."""
        return {**self.request["env"], **sdk_environment(self.run.version)}

    def flags(self) -> list[str]:
        """The flags the SDK passes for this run's options (permission mode and its prompt tool)."""
        version = self.run.version  # the SDK release writes its valued flags in its own form
        flags = [*STREAM_JSON_FLAGS, *valued(version, "--permission-mode", self.mode)]
        if self.mode == "bypassPermissions":
            flags.append("--allow-dangerously-skip-permissions")
        else:
            flags += valued(version, "--permission-prompt-tool", "stdio")
        disallowed = "AskUserQuestion,ExitPlanMode" if self.mode == "plan" else "AskUserQuestion"
        return [*flags, *valued(version, "--disallowedTools", disallowed), "--no-session-persistence"]

    def spawn_failed(self) -> NoReturn:
        """No live process: close the query only (never signal or wait on a failed spawn)."""
        self.reject_startup(None, self.close_query_only)

    def close_query_only(self) -> None:
        """The rollback of a failed spawn: the query is closed, nothing is signalled or waited for."""
        self.aborted.set()
        self.stage = STAGE_TEARDOWN
        try:
            self.faults.check("close_query")  # the query had nothing to close but its own state
        except RuntimeError as error:
            raise TeardownFailure([error], None) from None

    def roll_back(self) -> NoReturn:
        """Startup failed with a live process: roll back, then reject (the aggregate if that failed)."""
        assert self.process is not None
        # The outcome observed before rollback (or before a cancellation had the CLI terminated):
        # the exit that the provider's own termination causes never shows.
        self.reject_startup(self.process.outcome_before_termination, self.abort_and_tear_down)

    def abort_and_tear_down(self) -> None:
        self.abort()
        self.teardown()

    def reject_startup(self, outcome: ProcessOutcome | None, rollback: Callable[[], None]) -> NoReturn:
        """Reject start(): the startup line, with the rollback's teardown line if the rollback failed,
        or the plain abort text when the request was cancelled."""
        cancelled = self.aborted.is_set() or self.request_aborted()
        startup = self.error_text(self.stage, "unknown", outcome)
        try:
            rollback()
        except TeardownFailure as failure:
            teardown = self.error_text(self.stage, "unknown", failure.outcome)
            raise StartRejected(startup + AGGREGATE_SEPARATOR + teardown) from None
        if cancelled or self.request_aborted():
            raise StartRejected(ABORTED)
        raise StartRejected(startup)

    # ---- the result

    def consume(self) -> None:
        assert self.process is not None
        result = self.settle_result()
        self.process.end_input()  # the SDK's iterator is done with the CLI's input
        self.result_value = result
        self.settled.set()

    def result(self) -> Json:
        self.settled.wait()
        assert self.result_value is not None
        return self.result_value

    def settle_result(self) -> Json:
        """The pure classifier over the live stream, with the outcome observed when it classifies."""
        assert self.query is not None and self.process is not None
        process = self.process
        return claude_code.settle(self.run, self.query.messages(), lambda: process.outcome, self.aborted.is_set)

    # ---- dispose()

    def teardown(self) -> None:
        """Close the query, terminate the group, wait for the tree, await the final outcome; a
        failed step never skips a later one."""
        assert self.process is not None and self.query is not None
        self.stage = STAGE_TEARDOWN
        failures: list[BaseException] = []
        try:
            self.query.close()
            self.faults.check("close_query")
        except Exception as error:
            failures.append(error)
        self.process.terminate()
        try:
            self.process.wait_tree()
            self.faults.check("tree_wait")
        except Exception as error:
            failures.append(error)
        outcome: ProcessOutcome | None
        try:
            outcome = self.process.final_outcome()
            self.faults.check("final_outcome")
        except Exception as error:
            outcome = None
            failures.append(error)
        self.process.close()
        if failures:
            raise TeardownFailure(failures, outcome)

    def dispose(self) -> Json:
        """Memoized: a second call returns the first call's settlement and tears nothing down."""
        with self._dispose_lock:
            if self.disposal is None:
                if not self.settled.is_set():
                    self.abort()  # dispose before settlement cancels locally
                self.settled.wait()
                try:
                    self.teardown()
                except TeardownFailure as failure:
                    self.disposal = {"rejected": self.error_text(self.stage, "unknown", failure.outcome)}
                else:
                    self.disposal = {"resolved": True}
            return dict(self.disposal)


def run_claude_code(request: Json, run_class: type[ClaudeCodeProcessRun] = ClaudeCodeProcessRun) -> Json:
    """Start every run (they overlap), then settle and dispose each: {"runs": [outcome, ...]}."""
    version = request.get("productVersion", ClaudeCodeRun.version)

    def make(run: Json, request_signal: AbortSignal) -> ClaudeCodeProcessRun:
        managed = run_class(run, request_signal)
        managed.run.version = version  # before start(): the run reads no result until then
        return managed

    return {"runs": run_batch(request["runs"], make)}
