"""What every product driver needs from its managed process, written once.

A provider's subprocess layer (upstream: ``packages/subprocess``) is the same for Claude Code and
Codex: the child gets its own process group so that the whole tree can be signalled, a zombie
counts as gone (nothing here reaps orphans), its stdout, stderr and exit are read in the order
they happened (what it wrote before exiting is read before its exit is seen), an exit is reported
as Node.js reports it (an exit code, or the name of the signal that killed the child), start()
admits a request in the order of table startup_rejections, and the host's side of a process
operation starts every run of one call before any is disposed. The products' protocols (the
SDK's control handshake, the app-server's JSON-RPC) stay in their drivers.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import queue
import selectors
import signal
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from reference_impl.diagnostic import NODE_SIGNALS

Json = dict[str, Any]

RUN_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_RUN"
FAULT_PREFIX = "FAULT-"
# How often a teardown looks again for a group that is still alive: from the first to the longest pause.
FIRST_PAUSE, LONGEST_PAUSE = 0.001, 0.02
READ_SIZE = 65536


@dataclass(frozen=True)
class ProcessOutcome:
    """The managed process's exit as the process layer reports it (None: not observed or not nameable)."""

    exit_code: int | None
    signal: str | None


def outcome_of(returncode: int) -> ProcessOutcome:
    """Popen's return code as Node.js reports the exit: a code, or a signal name Node knows."""
    if returncode >= 0:
        return ProcessOutcome(returncode, None)
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return ProcessOutcome(None, None)
    return ProcessOutcome(None, name if name in NODE_SIGNALS else None)


# --------------------------------------------------------------------------- the process group


class SpawnFailed(Exception):
    """The spawn itself failed: no process exists, so nothing is signalled or waited for."""


def spawn(argv: list[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The product in a process group of its own, with piped stdin, stdout and stderr."""
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        raise SpawnFailed(type(error).__name__) from error


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (a zombie has exited: only a wait is missing)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def signal_group(pgid: int, number: int) -> None:
    """Signal every process of the group; a group that is gone already is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, number)


def wait_group(pgid: int, child_exited: Callable[[], bool], *, kill_at: float, give_up_at: float | None = None) -> bool:
    """Wait until the direct child has exited and no process of the group runs; SIGKILL the group
    once ``kill_at`` (a monotonic time) has passed. False when ``give_up_at`` passed first."""
    killed = False
    pause = FIRST_PAUSE
    # While the direct child runs the group is alive; only then is /proc searched for the rest.
    while not child_exited() or group_alive(pgid):
        now = time.monotonic()
        if not killed and now >= kill_at:
            signal_group(pgid, signal.SIGKILL)
            killed = True
        if give_up_at is not None and now >= give_up_at:
            return False
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
    return True


# --------------------------------------------------------------------------- what a reader thread observes


@dataclass(frozen=True)
class Line:
    """One line of stdout, without its newline."""

    text: str


@dataclass(frozen=True)
class Stderr:
    """A chunk of stderr, decoded as it came."""

    text: str


@dataclass(frozen=True)
class StdoutEnd:
    """stdout closed: no process holds it any more."""


@dataclass(frozen=True)
class Exit:
    """The direct child exited (and is reaped)."""

    returncode: int  # Popen's: negative for the signal that killed the child


@dataclass(frozen=True)
class Command:
    """What another thread posted to the reader thread (a driver's own vocabulary: "cancel", "close")."""

    name: str


PipeEvent = Line | Stderr | StdoutEnd | Exit | Command


class Pipes:
    """The child's stdout, stderr and exit, and the other threads' commands, in observation order.

    When the child's exit is seen, whatever it wrote before exiting is read first, so a frame
    queued just before the exit is always observed before it.
    """

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None and child.stderr is not None
        self.child = child
        self.selector = selectors.DefaultSelector()
        self.stdout = child.stdout.fileno()
        self.stderr = child.stderr.fileno()
        self.wake_read, self.wake_write = os.pipe()
        for fd, name in ((self.stdout, "stdout"), (self.stderr, "stderr"), (self.wake_read, "wake")):
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ, name)
        self.pidfd: int | None
        try:
            self.pidfd = os.pidfd_open(child.pid)
            self.selector.register(self.pidfd, selectors.EVENT_READ, "exit")
        except OSError:
            self.pidfd = None  # no pidfd here: poll the child instead
        self.open = {"stdout", "stderr"}
        self.lock = threading.Lock()
        self.closed = False
        self.exited = False
        self.commands: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.pending: deque[PipeEvent] = deque()
        self.line_buffer = b""
        self.stderr_decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def post(self, command: str) -> None:
        """Called from any thread: hand a command to the reader thread (a no-op once closed)."""
        with self.lock:
            if self.closed:
                return
            self.commands.put(command)
            with contextlib.suppress(OSError):
                os.write(self.wake_write, b"!")

    def next(self, timeout: float | None) -> PipeEvent | None:
        """The next observation, waiting at most ``timeout`` seconds (None: as long as it takes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._gather(remaining)
            if not self.pending and remaining == 0:
                return None
        return self.pending.popleft()

    def gather_now(self) -> None:
        """Take in what has already happened, without waiting."""
        self._gather(0)

    def _gather(self, timeout: float | None) -> None:
        if self.pidfd is None and not self.exited:
            timeout = 0.01 if timeout is None else min(timeout, 0.01)
        names = {key.data for key, _ in self.selector.select(timeout)}
        exited = "exit" in names or (self.pidfd is None and not self.exited and self.child.poll() is not None)
        if "wake" in names:
            try:
                while os.read(self.wake_read, READ_SIZE):
                    pass
            except BlockingIOError:
                pass
        if "stderr" in names or (exited and "stderr" in self.open):
            self._read_stderr()
        if "stdout" in names or (exited and "stdout" in self.open):
            self._read_stdout()
        if exited and not self.exited:
            self.exited = True
            if self.pidfd is not None:
                self.selector.unregister(self.pidfd)
            self.pending.append(Exit(self.child.wait()))
        while not self.commands.empty():
            self.pending.append(Command(self.commands.get()))

    def _drain(self, fd: int) -> tuple[bytes, bool]:
        data, ended = b"", False
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                ended = True
                break
            data += chunk
        return data, ended

    def _read_stderr(self) -> None:
        data, ended = self._drain(self.stderr)
        text = self.stderr_decoder.decode(data, final=ended)
        if text:
            self.pending.append(Stderr(text))
        if ended:
            self._close("stderr", self.stderr)

    def _read_stdout(self) -> None:
        data, ended = self._drain(self.stdout)
        self.line_buffer += data
        *lines, self.line_buffer = self.line_buffer.split(b"\n")
        if ended and self.line_buffer:
            lines.append(self.line_buffer)
            self.line_buffer = b""
        self.pending.extend(Line(line.decode("utf-8", "replace")) for line in lines)
        if ended:
            self._close("stdout", self.stdout)
            self.pending.append(StdoutEnd())

    def _close(self, name: str, fd: int) -> None:
        self.open.discard(name)
        self.selector.unregister(fd)

    def close(self) -> None:
        with self.lock:
            self.closed = True
        self.selector.close()
        for fd in (self.wake_read, self.wake_write, self.pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


# --------------------------------------------------------------------------- admission and faults


class StartRejected(Exception):
    """start() rejects; the message is the safe text the parent sees."""


@dataclass(frozen=True)
class StartTexts:
    """A product's start() rejections for what is checked before anything is spawned, in the
    order of table startup_rejections (orders 1-4)."""

    no_cwd: str
    unusable_cwd: str
    not_text: str
    empty: str
    aborted: str


def admit(request: Json, aborted: Callable[[], bool], texts: StartTexts, is_blank: Callable[[str], bool]) -> list[str]:
    """The working directory and the task checked in the table's order; the task's texts, or StartRejected."""
    cwd = request["cwd"]
    if cwd is None:
        raise StartRejected(texts.no_cwd)
    if not usable_directory(cwd):
        raise StartRejected(texts.aborted if aborted() else texts.unusable_cwd)
    found: list[str] = []
    for block in request["task"]:
        if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            raise StartRejected(texts.not_text)
        found.append(block["text"])
    if not found:
        raise StartRejected(texts.not_text)
    if all(is_blank(text) for text in found):
        raise StartRejected(texts.empty)
    if aborted():
        raise StartRejected(texts.aborted)
    return found


def usable_directory(cwd: str) -> bool:
    """An absolute path to a directory the child can enter."""
    return os.path.isabs(cwd) and os.path.isdir(cwd) and os.access(cwd, os.X_OK)


class Faults:
    """The teardown steps a RUN makes fail (operations.json ``faults``): the step runs, then fails
    with a canary message that must never reach any text."""

    def __init__(self, request: Json) -> None:
        self.steps = frozenset(request.get("faults", []))
        self.message = FAULT_PREFIX + (request["env"].get(RUN_TOKEN_VARIABLE) or uuid.uuid4().hex)

    def check(self, step: str, error: Callable[[str], Exception] = RuntimeError) -> None:
        """Fail ``step`` (which has run) when the RUN injects a fault there."""
        if step in self.steps:
            raise error(self.message)


# --------------------------------------------------------------------------- the host's side of an operation


class AbortSignal:
    """The request's cancellation signal: set once, each listener called once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aborted = False
        self._listeners: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def listen(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` on abort, or now if the signal is aborted already."""
        with self._lock:
            if not self._aborted:
                self._listeners.append(listener)
                return
        listener()

    def forget(self, listener: Callable[[], None]) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)


class ManagedRun(Protocol):
    """A provider's run as the host sees it: start(), the result, dispose()."""

    def start(self) -> None: ...

    def result(self) -> Json: ...

    def dispose(self) -> Json: ...


def run_batch(runs: list[Json], make: Callable[[Json, AbortSignal], ManagedRun]) -> list[Json]:
    """The host's side of run_claude_code / run_codex: each run started with its cancellation armed
    as its RUN says, every run started before any is disposed (so they overlap), then the result
    and dispose() twice, when the RUN says. Outcomes in order; a driver error raises here, after
    every other run was disposed."""
    everyone_started = threading.Barrier(len(runs))
    return in_parallel([functools.partial(_host, run, make, everyone_started) for run in runs])


def _host(run: Json, make: Callable[[Json, AbortSignal], ManagedRun], everyone_started: threading.Barrier) -> Json:
    started = time.monotonic()
    request_signal = AbortSignal()
    timer: threading.Timer | None = None
    cancel = run.get("cancel") or {}
    if cancel.get("before_start"):
        request_signal.abort()
    elif "after_ms" in cancel:
        timer = threading.Timer(cancel["after_ms"] / 1000, request_signal.abort)
        timer.daemon = True
        timer.start()
    try:
        try:
            handle = make(run, request_signal)
            handle.start()
        except StartRejected as rejected:
            return {"start": {"rejected": str(rejected)}, "result": None, "dispose": []}
        finally:
            everyone_started.wait()
        delay = run.get("dispose_after_ms")
        if delay is None:
            result = handle.result()
            first = handle.dispose()
        else:  # dispose() before the result settles cancels it locally
            time.sleep(max(0.0, started + delay / 1000 - time.monotonic()))
            first = handle.dispose()
            result = handle.result()
        return {"start": {"published": True}, "result": result, "dispose": [first, handle.dispose()]}
    finally:
        if timer is not None:
            timer.cancel()


def in_parallel(calls: list[Callable[[], Json]]) -> list[Json]:
    """Every call on its own thread (a single one on this thread); the answers in order. A call that
    raised re-raises here once all have returned."""
    if len(calls) == 1:
        return [calls[0]()]
    answers: list[Json] = [{} for _ in calls]
    errors: list[BaseException] = []

    def call(index: int) -> None:
        try:
            answers[index] = calls[index]()
        except BaseException as error:  # re-raised in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=call, args=(i,), name=f"run-{i}", daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return answers
