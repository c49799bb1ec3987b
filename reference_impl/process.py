"""What every product driver observes of its managed process, written once.

A provider's subprocess layer (upstream: ``packages/subprocess``) is the same for Claude Code and
Codex: the child's stdout, stderr and exit are read in the order they happened (what it wrote
before exiting is read before its exit is seen), and an exit is reported as Node.js reports it
(an exit code, or the name of the signal that killed the child). The rest of that layer stands
beside this module: the process group and its teardown (``process_tree``), what start() checks
before anything is spawned (``process_admission``) and the host's side of a process operation,
which starts every run of one call before any is disposed (``process_host``). The products'
protocols (the SDK's control handshake, the app-server's JSON-RPC) stay in their drivers.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import queue
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass

from reference_impl.diagnostic import NODE_SIGNALS

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
