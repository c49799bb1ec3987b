"""The Claude Code CLI as a managed process: the handle a run holds on its process group.

The CLI runs in a process group of its own (``reference_impl.process_tree``), and one reader
thread reads its stdout frames, its stderr and its exit in the order they happened
(``reference_impl.process.Pipes``, as the Codex driver reads them). stderr is kept only as a
short tail for the SDK's exit error, never copied into a result. Termination signals the whole
group, once, and remembers what had been observed by then: an exit the provider's own
termination caused is never a fact of the failure that made it terminate.
"""

from __future__ import annotations

import json
import math
import queue
import signal
import threading
import time
from typing import Any

from reference_impl.process import Command, Exit, Line, Pipes, ProcessOutcome, Stderr, StdoutEnd, outcome_of
from reference_impl.process_tree import signal_group, spawn, wait_group

Json = dict[str, Any]

TERMINATE_GRACE = 0.2  # seconds between SIGTERM and SIGKILL of the group
STDERR_TAIL = 4096


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
