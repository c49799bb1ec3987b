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
the group is alive and awaits the direct child's final outcome; it is memoized. The process
group, its pipes read in the order things happened, the exit as Node reports it, admission and
the host's side of the operation (every run of one call started before any is disposed) are
:mod:`reference_impl.process`, shared with the Codex driver.
"""

from __future__ import annotations

import json
import math
import queue
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from reference_impl import claude_code
from reference_impl.claude_code import ClaudeCodeRun, SdkIteratorError
from reference_impl.diagnostic import CLAUDE_CODE, ERROR_PREFIX
from reference_impl.process import (
    AbortSignal,
    Command,
    Exit,
    Faults,
    Line,
    Pipes,
    ProcessOutcome,
    SpawnFailed,
    StartRejected,
    StartTexts,
    Stderr,
    StdoutEnd,
    admit,
    outcome_of,
    run_batch,
    signal_group,
    spawn,
    wait_group,
)

Json = dict[str, Any]

SDK_VERSION = "0.3.220"
# What @anthropic-ai/claude-agent-sdk passes to the CLI for a one-shot query (sdk.mjs).
STREAM_JSON_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
SDK_ENVIRONMENT = {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts", "CLAUDE_AGENT_SDK_VERSION": SDK_VERSION}

TERMINATE_GRACE = 0.2  # seconds between SIGTERM and SIGKILL of the group
ABORT_POLL = 0.01  # how often the SDK, waiting for the CLI's exit, looks at its abort signal
STDERR_TAIL = 4096

STAGE_START, STAGE_RUN, STAGE_TEARDOWN = "query-start", "query-run", "teardown"
AGGREGATE_SEPARATOR = "; "  # a failed rollback joins the startup text and the teardown text

NO_CWD = "subagent-claude-code: no working directory for the child — delegate from a parent session that has one"
NOT_TEXT = "subagent-claude-code: the one-shot task must contain only text blocks"
EMPTY_TASK = "subagent-claude-code: the one-shot task must not be empty"
ABORTED = "subagent-claude-code: request was aborted before SDK startup"


class StartupFailure(Exception):
    """Something before publication failed (its message is internal, never shown)."""


class AbortError(Exception):
    """The run's controller was aborted while the SDK was waiting."""


class TeardownFailure(Exception):
    """A teardown step failed; ``outcome`` is the direct child's final outcome, if obtained."""

    def __init__(self, failures: list[BaseException], outcome: ProcessOutcome | None) -> None:
        super().__init__("Claude Code teardown failures")
        self.failures = failures
        self.outcome = outcome


# --------------------------------------------------------------------------- the process group


class ManagedProcess:
    """The CLI's process group: its pipes and exit read by one thread in the order they happened
    (process.Pipes, as the Codex driver reads them), its stdin, termination."""

    EOF = ("eof", None)

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.popen = spawn(argv, cwd, env)
        self.pgid = self.popen.pid
        self.frames: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.exited = threading.Event()
        self._outcome: ProcessOutcome | None = None
        self._stderr = ""
        self._stderr_lock = threading.Lock()
        self._stdin_lock = threading.Lock()
        self._lock = threading.Lock()
        self._terminated_at: float | None = None
        self._outcome_at_termination: ProcessOutcome | None = None
        self._pipes = Pipes(self.popen)
        self._reader = threading.Thread(target=self._read, name=f"claude-code-{self.pgid}-reader", daemon=True)
        self._reader.start()

    @property
    def outcome(self) -> ProcessOutcome | None:
        """The direct child's exit as observed so far (None while it runs)."""
        return self._outcome

    @property
    def outcome_before_termination(self) -> ProcessOutcome | None:
        """The exit observed before this provider first signalled the group: an exit that
        its own termination caused is never a fact of the failure that made it terminate."""
        with self._lock:
            return self._outcome if self._terminated_at is None else self._outcome_at_termination

    def stderr_tail(self) -> str:
        with self._stderr_lock:
            return self._stderr

    def _read(self) -> None:
        """stdout frames, stderr and the exit until close(). The stream ends when stdout closes or,
        when a descendant still holds it, once the CLI exited: all the CLI wrote is read by then."""
        ended = False
        while not isinstance(event := self._pipes.next(None), Command):
            if isinstance(event, Line) and not ended:
                self._frame(event.text)
            elif isinstance(event, Stderr):
                with self._stderr_lock:  # observed, kept as a tail for the SDK's exit error, never copied out
                    self._stderr = (self._stderr + event.text)[-STDERR_TAIL:]
            elif isinstance(event, Exit):
                self._outcome = outcome_of(event.returncode)
                self.exited.set()
            if isinstance(event, StdoutEnd | Exit) and not ended:
                ended = True
                self.frames.put(self.EOF)
        self._pipes.close()

    def _frame(self, text: str) -> None:
        line = text.strip()
        if not line:
            return
        try:
            frame = json.loads(line)
        except ValueError:
            self.frames.put(("malformed", line))
            return
        if isinstance(frame, dict):
            self.frames.put(("frame", frame))

    def close(self) -> None:
        """Stop reading (the process group is gone) and release the pipes."""
        self._pipes.post("close")
        self._reader.join()
        for stream in (self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()

    def write(self, frame: Json) -> None:
        """One line on the CLI's stdin; a CLI that is gone simply does not read it."""
        data = (json.dumps(frame) + "\n").encode("utf-8")
        with self._stdin_lock:
            try:
                assert self.popen.stdin is not None
                self.popen.stdin.write(data)
                self.popen.stdin.flush()
            except (OSError, ValueError):
                pass

    def end_input(self) -> None:
        with self._stdin_lock:
            try:
                assert self.popen.stdin is not None
                self.popen.stdin.close()
            except (OSError, ValueError):
                pass

    def terminate(self) -> None:
        """SIGTERM to the whole group, once; wait_tree escalates to SIGKILL after the grace."""
        with self._lock:
            if self._terminated_at is not None:
                return
            self._terminated_at = time.monotonic()
            self._outcome_at_termination = self._outcome
        signal_group(self.pgid, signal.SIGTERM)

    def wait_tree(self) -> None:
        """Return once the direct child has exited and no process of the group runs (SIGKILL the
        group once the grace after terminate() has passed)."""
        terminated = self._terminated_at
        kill_at = math.inf if terminated is None else terminated + TERMINATE_GRACE
        wait_group(self.pgid, self.exited.is_set, kill_at=kill_at)

    def final_outcome(self) -> ProcessOutcome:
        self.exited.wait()
        assert self._outcome is not None
        return self._outcome


# --------------------------------------------------------------------------- the SDK query


class Query:
    """What the Agent SDK's query() does on the wire, for one one-shot prompt."""

    def __init__(self, process: ManagedProcess, run: ClaudeCodeRun, aborted: threading.Event) -> None:
        self.process = process
        self.run = run
        self.aborted = aborted

    def wake(self) -> None:
        """Unblock whoever waits for the next frame (the controller was aborted)."""
        self.process.frames.put(("cancel", None))

    def _next(self) -> tuple[str, Any]:
        """The next stream item, with control requests answered on the way."""
        while True:
            if self.aborted.is_set():
                return "cancel", None
            kind, value = self.process.frames.get()
            if kind == "frame" and value.get("type") == "control_request":
                self._answer(value)
                continue
            if kind == "frame" and value.get("type") in ("control_response", "control_cancel_request", "keep_alive"):
                continue  # the answer to initialize (success or error) changes nothing, as in the SDK
            return kind, value

    def _answer(self, frame: Json) -> None:
        """A control request of the CLI, answered at once; nothing is ever granted."""
        raw = frame.get("request")
        request: Json = raw if isinstance(raw, dict) else {}
        callbacks = self.run.callbacks()
        subtype = request.get("subtype")
        answer: Json | None = None
        if subtype == "can_use_tool" and "canUseTool" in callbacks:
            answer = callbacks["canUseTool"](request.get("tool_name"), request.get("input"), request)
        elif subtype == "elicitation":
            answer = callbacks["onElicitation"](request)
        elif subtype == "request_user_dialog":
            answer = callbacks["onUserDialog"](request)
        request_id = frame.get("request_id")
        if answer is None:
            response: Json = {"subtype": "error", "request_id": request_id, "error": "Unsupported control request"}
        else:
            response = {"subtype": "success", "request_id": request_id, "response": answer}
        self.process.write({"type": "control_response", "response": response})

    def _end_of_stream(self) -> None:
        """stdout ended: wait for the exit and raise the SDK's exit error unless it was a clean 0."""
        while not self.process.exited.wait(ABORT_POLL):
            if self.aborted.is_set():
                raise AbortError("aborted")
        outcome = self.process.final_outcome()
        tail = self.process.stderr_tail()
        if outcome.exit_code is None:  # killed by a signal (one Node cannot name is still not a clean exit)
            raise SdkIteratorError(f"Claude Code process terminated by signal {outcome.signal}\n{tail}")
        if outcome.exit_code:
            raise SdkIteratorError(f"Claude Code process exited with code {outcome.exit_code}\n{tail}")

    def open(self) -> None:
        """What the SDK's Query constructor writes: the initialize control request, whose answer
        nobody waits for (the SDK only attaches a catch to it)."""
        request = {"subtype": "initialize", "hooks": None}
        self.process.write({"type": "control_request", "request_id": f"req_1_{uuid.uuid4().hex}", "request": request})

    def send_task(self, prompt: str) -> None:
        """The one-shot task as the one user message, written as query() returns."""
        message = {"role": "user", "content": prompt}
        self.process.write({"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None})

    def first_output(self) -> None:
        """Return at the first thing the CLI does besides the control protocol (a message, a
        malformed line, or the end of its stdout once it exited), answering control requests on
        the way; StartupFailure if the controller is aborted first. Only a run that injects a
        failure of the query's construction (fault ``query_construction``) waits for it: its
        construction lasts until then, so its script decides whether the CLI is still alive."""
        kind, _ = self._next()
        if kind == "cancel":
            raise StartupFailure("aborted during startup")
        while kind == "eof" and not self.process.exited.wait(ABORT_POLL):
            if self.aborted.is_set():
                raise StartupFailure("aborted during startup")

    def messages(self) -> Iterator[Json]:
        """The SDK message stream: ends normally only at a clean exit; stdin closes after a result."""
        result_seen = False
        while True:
            if result_seen:
                self.process.end_input()  # a single-turn prompt: no more input after its result
            kind, value = self._next()
            if kind == "cancel":
                raise AbortError("aborted")
            if kind == "malformed":
                raise SdkIteratorError(f"invalid stream-json from Claude Code: {value}")
            if kind == "eof":
                self._end_of_stream()
                return
            result_seen = result_seen or value.get("type") == "result"
            yield value

    def close(self) -> None:
        self.process.end_input()
        self.wake()


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
        env = {**self.request["env"], **SDK_ENVIRONMENT}
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

    def flags(self) -> list[str]:
        """The flags the SDK passes for this run's options (permission mode and its prompt tool)."""
        flags = [*STREAM_JSON_FLAGS, "--permission-mode", self.mode]
        if self.mode == "bypassPermissions":
            flags.append("--allow-dangerously-skip-permissions")
        else:
            flags += ["--permission-prompt-tool", "stdio"]
        disallowed = "AskUserQuestion,ExitPlanMode" if self.mode == "plan" else "AskUserQuestion"
        return [*flags, "--disallowedTools", disallowed, "--no-session-persistence"]

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
    return {"runs": run_batch(request["runs"], run_class)}
