"""The Claude Code provider as a real driver of a managed CLI process (operation run_claude_code).

Written the way a provider drives the Claude Agent SDK and the CLI it spawns: the run owns
one process group (``start_new_session``), talks stream-json over pipes (the SDK's control
protocol: the ``initialize`` handshake, the task as a user message, permission control
requests answered at once without granting), observes stderr without ever copying it into
a result, and knows its stage at every step. The outcome rules are not restated here: the
SDK messages it reads go through :class:`reference_impl.claude_code.ClaudeCodeRun`, the
same classifier the pure operation uses.

Startup is SDK query construction, the spawn and the control handshake; a run is published
only once the CLI is alive and has answered ``initialize``. dispose() closes the query,
terminates the group (SIGTERM, then SIGKILL after a short grace), waits until no process of
the group is alive (zombies count as gone: nothing here reaps orphans) and awaits the direct
child's final outcome; it is memoized. Every run of one call is started before any is
disposed, so the runs overlap in time.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from reference_impl import claude_code
from reference_impl.claude_code import ClaudeCodeRun, ProcessOutcome, SdkIteratorError
from reference_impl.diagnostic import CLAUDE_CODE, ERROR_PREFIX

Json = dict[str, Any]

SDK_VERSION = "0.3.220"
# What @anthropic-ai/claude-agent-sdk passes to the CLI for a one-shot query (sdk.mjs).
STREAM_JSON_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
SDK_ENVIRONMENT = {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts", "CLAUDE_AGENT_SDK_VERSION": SDK_VERSION}

TERMINATE_GRACE = 0.2  # seconds between SIGTERM and SIGKILL of the group
HELD_PIPE_GRACE = 0.1  # how long stdout may stay open after the direct child exited
POLL = 0.005
STDERR_TAIL = 4096

STAGE_START, STAGE_RUN, STAGE_TEARDOWN = "query-start", "query-run", "teardown"
AGGREGATE_SEPARATOR = "; "  # a failed rollback joins the startup text and the teardown text

NO_CWD = "subagent-claude-code: no working directory for the child — delegate from a parent session that has one"
NOT_TEXT = "subagent-claude-code: the one-shot task must contain only text blocks"
EMPTY_TASK = "subagent-claude-code: the one-shot task must not be empty"
ABORTED = "subagent-claude-code: request was aborted before SDK startup"


class StartRejected(Exception):
    """start() rejects with this text."""


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


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (a zombie has exited)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def outcome_of(returncode: int) -> ProcessOutcome:
    """Node's view of an exit: a code, or the name of the signal that killed it."""
    if returncode >= 0:
        return ProcessOutcome(returncode, None)
    try:
        name: str | None = signal.Signals(-returncode).name
    except ValueError:
        name = None
    return ProcessOutcome(None, name)


class ManagedProcess:
    """The CLI's process group: pipes, reader threads, the exit watcher, termination."""

    EOF = ("eof", None)

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.pgid = self.popen.pid
        self.frames: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.exited = threading.Event()
        self.stdout_done = threading.Event()
        self._outcome: ProcessOutcome | None = None
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._stdin_lock = threading.Lock()
        self._lock = threading.Lock()
        self._terminated_at: float | None = None
        self._killed = False
        for target in (self._read_stdout, self._read_stderr, self._watch):
            threading.Thread(target=target, name=f"claude-code-{self.pgid}-{target.__name__}", daemon=True).start()

    @property
    def outcome(self) -> ProcessOutcome | None:
        """The direct child's exit as observed so far (None while it runs)."""
        return self._outcome

    def stderr_tail(self) -> str:
        with self._stderr_lock:
            return self._stderr.decode("utf-8", errors="replace")

    def _read_stdout(self) -> None:
        assert self.popen.stdout is not None
        for raw in iter(self.popen.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                self.frames.put(("malformed", line))
                continue
            if isinstance(frame, dict):
                self.frames.put(("frame", frame))
        self.stdout_done.set()
        self.frames.put(self.EOF)

    def _read_stderr(self) -> None:
        assert self.popen.stderr is not None
        descriptor = self.popen.stderr.fileno()
        for chunk in iter(lambda: os.read(descriptor, 4096), b""):
            with self._stderr_lock:  # observed, kept as a tail for the SDK's exit error, never copied out
                self._stderr += chunk
                del self._stderr[:-STDERR_TAIL]

    def _watch(self) -> None:
        self._outcome = outcome_of(self.popen.wait())
        self.exited.set()
        if not self.stdout_done.wait(HELD_PIPE_GRACE):
            self.frames.put(self.EOF)  # a descendant still holds stdout: the stream has ended anyway

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
        self._signal_group(signal.SIGTERM)

    def _signal_group(self, number: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, number)

    def wait_tree(self) -> None:
        """Return once the direct child has exited and no process of the group runs."""
        while not (self.exited.is_set() and not group_alive(self.pgid)):
            started = self._terminated_at
            if started is not None and not self._killed and time.monotonic() - started >= TERMINATE_GRACE:
                self._killed = True
                self._signal_group(signal.SIGKILL)
            time.sleep(POLL)

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
        self.buffered: list[Json] = []

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
            if kind == "frame" and value.get("type") in ("control_cancel_request", "keep_alive"):
                continue
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
        while not self.process.exited.wait(POLL * 2):
            if self.aborted.is_set():
                raise AbortError("aborted")
        outcome = self.process.final_outcome()
        tail = self.process.stderr_tail()
        if outcome.signal is not None:
            raise SdkIteratorError(f"Claude Code process terminated by signal {outcome.signal}\n{tail}")
        if outcome.exit_code:
            raise SdkIteratorError(f"Claude Code process exited with code {outcome.exit_code}\n{tail}")

    def initialize(self, prompt: str) -> None:
        """The control handshake, then the task as the one user message."""
        request_id = f"req_1_{uuid.uuid4().hex}"
        self.process.write(
            {"type": "control_request", "request_id": request_id, "request": {"subtype": "initialize", "hooks": None}}
        )
        while True:
            kind, value = self._next()
            if kind == "cancel":
                raise StartupFailure("aborted during startup")
            if kind == "malformed":
                raise StartupFailure(f"invalid stream-json: {value}")
            if kind == "eof":
                try:
                    self._end_of_stream()
                except (SdkIteratorError, AbortError) as error:
                    raise StartupFailure(str(error)) from error
                raise StartupFailure("Claude Code exited before answering initialize")
            response = value.get("response") if value.get("type") == "control_response" else None
            if isinstance(response, dict) and response.get("request_id") == request_id:
                if response.get("subtype") != "success":
                    raise StartupFailure(f"initialize failed: {response.get('error')}")
                break
            if value.get("type") != "control_response":
                self.buffered.append(value)
        message = {"role": "user", "content": prompt}
        self.process.write({"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None})

    def messages(self) -> Iterator[Json]:
        """The SDK message stream: ends normally only at a clean exit; stdin closes after a result."""
        result_seen = False
        yield from self.buffered
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


def task_prompt(task: list[Json]) -> str:
    """The task as the SDK's one prompt: text blocks only, not all blank, joined."""
    if not task or any(block.get("type") != "text" for block in task):
        raise StartRejected(NOT_TEXT)
    texts = [str(block.get("text", "")) for block in task]
    if all(claude_code.is_blank(text) for text in texts):
        raise StartRejected(EMPTY_TASK)
    return "".join(texts)


def usable_directory(cwd: str) -> bool:
    return os.path.isabs(cwd) and os.path.isdir(cwd) and os.access(cwd, os.X_OK)


class ClaudeCodeProcessRun:
    """One start(), its result and its dispose(), as a provider runs them."""

    run_class: type[ClaudeCodeRun] = ClaudeCodeRun
    process_class: type[ManagedProcess] = ManagedProcess

    def __init__(self, request: Json) -> None:
        self.request = request
        self.mode: str = request["mode"]
        self.faults = set(request.get("faults", []))
        self.token = request["env"].get("SUBAGENT_CONFORMANCE_RUN") or uuid.uuid4().hex
        self.run = self.run_class(self.mode)
        self.stage = STAGE_START
        self.request_aborted = threading.Event()  # the request's abort signal
        self.aborted = threading.Event()  # the run's own controller
        self.process: ManagedProcess | None = None
        self.query: Query | None = None
        self.started_at = 0.0
        self.start_outcome: Json = {}
        self.result: Json | None = None
        self.settled = threading.Event()
        self.disposal: Json | None = None
        self._dispose_lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._consumer: threading.Thread | None = None

    # ---- cancellation

    def cancel_request(self) -> None:
        """The request's signal aborts; it cancels the run locally until the result settled."""
        self.request_aborted.set()
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

    def fault(self, step: str) -> None:
        """An injected failure of a teardown step (the step itself has run)."""
        if step in self.faults:
            raise RuntimeError(f"FAULT-{self.token}")

    # ---- texts

    def error_text(self, stage: str, category: str, outcome: ProcessOutcome | None) -> str:
        return ERROR_PREFIX[CLAUDE_CODE] + self.run.failure_line(stage, category, outcome)

    # ---- start()

    def start_call(self) -> None:
        """Call start() as the host does, with the request's cancellation armed."""
        cancel = self.request.get("cancel")
        if cancel and cancel.get("before_start"):
            self.request_aborted.set()
        self.started_at = time.monotonic()
        if cancel and "after_ms" in cancel:
            self._timer = threading.Timer(cancel["after_ms"] / 1000, self.cancel_request)
            self._timer.daemon = True
            self._timer.start()
        try:
            self.start()
        except StartRejected as rejection:
            self.start_outcome = {"rejected": str(rejection)}
        else:
            self.start_outcome = {"published": True}

    def start(self) -> None:
        cwd = self.request["cwd"]
        if cwd is None:
            raise StartRejected(NO_CWD)
        if not usable_directory(cwd):
            if self.request_aborted.is_set():
                raise StartRejected(ABORTED)
            raise StartRejected(self.error_text(self.stage, "unknown", None))
        prompt = task_prompt(self.request["task"])
        if self.request_aborted.is_set():
            raise StartRejected(ABORTED)
        argv = [*self.request["argv"], *self.flags()]
        env = {**self.request["env"], **SDK_ENVIRONMENT}
        try:
            self.process = self.process_class(argv, cwd, env)
        except OSError:
            self.spawn_failed()
        assert self.process is not None
        self.query = Query(self.process, self.run, self.aborted)
        try:
            if self.request_aborted.is_set():
                self.abort()  # cancelled while the query and the CLI were being created
            self.query.initialize(prompt)
            if self.aborted.is_set():
                raise StartupFailure("aborted during startup")
        except StartupFailure:
            self.roll_back()
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

    def spawn_failed(self) -> None:
        """No live process: close the query only (never signal or wait on a failed spawn)."""
        cancelled = self.aborted.is_set() or self.request_aborted.is_set()
        startup = self.error_text(self.stage, "unknown", None)
        self.aborted.set()
        self.stage = STAGE_TEARDOWN
        try:
            self.fault("close_query")  # the query had nothing to close but its own state
        except RuntimeError:
            teardown = self.error_text(self.stage, "unknown", None)
            raise StartRejected(startup + AGGREGATE_SEPARATOR + teardown) from None
        if cancelled or self.request_aborted.is_set():
            raise StartRejected(ABORTED)
        raise StartRejected(startup)

    def roll_back(self) -> None:
        """Startup failed with a live process: roll back, then reject (the aggregate if that failed)."""
        assert self.process is not None
        cancelled = self.aborted.is_set() or self.request_aborted.is_set()
        outcome = self.process.outcome  # observed before rollback; the rollback's own exit never shows
        startup = self.error_text(self.stage, "unknown", outcome)
        self.abort()
        try:
            self.teardown()
        except TeardownFailure as failure:
            teardown = self.error_text(self.stage, "unknown", failure.outcome)
            raise StartRejected(startup + AGGREGATE_SEPARATOR + teardown) from None
        if cancelled or self.request_aborted.is_set():
            raise StartRejected(ABORTED)
        raise StartRejected(startup)

    # ---- the result

    def consume(self) -> None:
        assert self.process is not None
        result = self.settle_result()
        self.process.end_input()  # the SDK's iterator is done with the CLI's input
        self.result = result
        self.settled.set()

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
            self.fault("close_query")
        except Exception as error:
            failures.append(error)
        self.process.terminate()
        try:
            self.process.wait_tree()
            self.fault("tree_wait")
        except Exception as error:
            failures.append(error)
        outcome: ProcessOutcome | None
        try:
            outcome = self.process.final_outcome()
            self.fault("final_outcome")
        except Exception as error:
            outcome = None
            failures.append(error)
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
                if self._timer is not None:
                    self._timer.cancel()
            return dict(self.disposal)

    def finish(self) -> list[Json]:
        """After every run of the call started: dispose twice, when the request says."""
        delay = self.request.get("dispose_after_ms")
        if delay is None:
            self.settled.wait()
        else:
            time.sleep(max(0.0, self.started_at + delay / 1000 - time.monotonic()))
        settlements = [self.dispose(), self.dispose()]
        self.settled.wait()
        return settlements

    def outcome_json(self, settlements: list[Json]) -> Json:
        if "rejected" in self.start_outcome:
            return {"start": self.start_outcome, "result": None, "dispose": []}
        return {"start": self.start_outcome, "result": self.result, "dispose": settlements}


def _in_parallel(calls: list[Callable[[], Any]]) -> list[Any]:
    """Every call on its own thread; the answers in order (a call that raised re-raises here)."""
    answers: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def call(index: int) -> None:
        try:
            answers[index] = calls[index]()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return answers


def run_claude_code(request: Json, run_class: type[ClaudeCodeProcessRun] = ClaudeCodeProcessRun) -> Json:
    """Start every run (they overlap), then settle and dispose each: {"runs": [outcome, ...]}."""
    runs = [run_class(spec) for spec in request["runs"]]
    _in_parallel([run.start_call for run in runs])
    published = [run for run in runs if "published" in run.start_outcome]
    settlements = dict(zip(map(id, published), _in_parallel([run.finish for run in published]), strict=True))
    return {"runs": [run.outcome_json(settlements.get(id(run), [])) for run in runs]}
