"""Adapters in any language: ``--impl=exec:COMMAND`` speaks the operations as JSON lines.

The suite owns the adapter process: it runs in its own process group, every call has a
deadline, and a crashed, hung or babbling adapter fails the current test with the tail of
its stderr and is replaced by a fresh process for the next call. Nothing outlives the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

from conformance.spec import Spec, describe_error, operations_schema


class ExecFailure(AssertionError):
    """The adapter process failed the current call (crash, hang, malformed or error answer);
    ``requirements`` is the exec-protocol requirement the failure shows."""

    def __init__(self, message: str, requirements: tuple[str, ...] = ("ADP-019",)) -> None:
        super().__init__(message)
        self.requirements = requirements


class ExecStartError(Exception):
    """The adapter could not be started or did not describe itself; ``condition`` says which."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


@dataclass(frozen=True)
class Limits:
    """The exec protocol's limits (adapter-protocol.yaml, table exec_limits)."""

    describe_timeout: float
    pure_call_timeout: float
    process_call_timeout: float
    shutdown_grace: float
    stderr_tail: int
    response_line_max: int
    shown_value_max: int

    @classmethod
    def from_spec(cls, spec: Spec, pure_call_timeout: float | None = None) -> Limits:
        values = {row["name"]: row["value"] for row in spec.table("adapter-protocol", "exec_limits").rows}
        if pure_call_timeout is not None:
            values["pure_call_timeout"] = pure_call_timeout
        return cls(**values)


_EOF = object()


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    lines: queue.Queue[object] = field(default_factory=queue.Queue)
    stderr: bytearray = field(default_factory=bytearray)
    next_id: int = 1


class ExecAdapter:
    """One adapter command, and the process currently serving it."""

    def __init__(self, command: str, spec: Spec, limits: Limits, validate: bool = False) -> None:
        self.command = command
        # --validate-adapter: every line in both directions is checked against exec_request /
        # exec_response, not only the operation values inside them (which are always checked).
        self.envelopes = (
            (operations_schema(spec.root, "exec_request"), operations_schema(spec.root, "exec_response"))
            if validate
            else None
        )
        self.argv = shlex.split(command)
        self.limits = limits
        self.tiers = {row["operation"]: row["tier"] for row in spec.table("adapter-protocol", "operations").rows}
        self._process: _Process | None = None
        self.declaration: Any = None

    # ------------------------------------------------------------------ process

    def _start(self) -> _Process:
        try:
            popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so the whole tree can be killed
            )
        except OSError as exc:
            raise ExecStartError(f"cannot start {self.command!r}: {exc}", "exec-not-started") from None
        process = _Process(popen)
        assert popen.stdout is not None and popen.stderr is not None
        threading.Thread(target=self._read_lines, args=(popen.stdout, process.lines), daemon=True).start()
        threading.Thread(target=self._read_tail, args=(popen.stderr, process.stderr), daemon=True).start()
        self._process = process
        return process

    @staticmethod
    def _read_lines(stream: IO[bytes], lines: queue.Queue[object]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(_EOF)

    def _read_tail(self, stream: IO[bytes], tail: bytearray) -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            tail.extend(chunk)
            del tail[: max(0, len(tail) - self.limits.stderr_tail)]

    @staticmethod
    def _kill_group(process: _Process) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.popen.pid, signal.SIGKILL)  # the adapter and anything it started
        process.popen.wait()

    def _kill(self, process: _Process) -> None:
        self._kill_group(process)
        if self._process is process:
            self._process = None

    def close(self) -> None:
        """End of the run: close stdin, allow the grace period, then kill the whole group."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            assert process.popen.stdin is not None
            process.popen.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=self.limits.shutdown_grace)
        self._kill_group(process)

    # ------------------------------------------------------------------ calls

    def describe(self) -> Any:
        """Start a process and ask for its declaration (the first request of every process)."""
        process = self._start()
        try:
            self.declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
        except ExecFailure as exc:
            raise ExecStartError(f"{self.command!r} did not describe itself: {exc}", "no-declaration") from None
        return self.declaration

    def call(self, op: str, payload: Any) -> Any:
        process = self._process
        if process is None:
            process = self._start()
            declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
            if declaration != self.declaration:
                self._kill(process)
                raise ExecFailure(f"the restarted adapter describes itself differently: {declaration!r}")
        timeout = self.limits.process_call_timeout if self.tiers.get(op) == "process" else self.limits.pure_call_timeout
        return self._exchange(process, op, payload, timeout)

    def _exchange(self, process: _Process, op: str, payload: Any, timeout: float) -> Any:
        request_id = process.next_id
        process.next_id += 1
        request = {"id": request_id, "op": op, "input": payload}
        if self.envelopes is not None:
            for error in self.envelopes[0].iter_errors(request):  # the suite's own line: a suite bug
                raise AssertionError(f"the suite built an invalid exec request: {describe_error(error)}")
        line = json.dumps(request, ensure_ascii=False) + "\n"
        try:
            assert process.popen.stdin is not None
            process.popen.stdin.write(line.encode("utf-8"))
            process.popen.stdin.flush()
        except OSError:
            pass  # the read below reports how the adapter ended
        deadline = time.monotonic() + timeout
        try:
            answer = process.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self._kill(process)
            raise ExecFailure(
                self._account(process, op, f"no answer within {timeout:g} s (hung; killed)"), ("ADP-018",)
            ) from None
        if answer is _EOF:
            process.popen.wait()
            status = process.popen.returncode
            how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
            self._kill(process)
            raise ExecFailure(self._account(process, op, f"the adapter ended ({how}) without answering"))
        assert isinstance(answer, bytes)
        try:
            message = json.loads(answer)
        except ValueError:
            message = None
        if (
            not isinstance(message, dict)
            or message.get("id") != request_id
            or (("output" in message) == ("error" in message))
        ):
            self._kill(process)
            shown = answer.decode("utf-8", "replace").rstrip("\n")[:300]
            raise ExecFailure(
                self._account(process, op, f"malformed response line {shown!r} (restarting)"), ("ADP-015", "ADP-016")
            )
        if self.envelopes is not None:
            for error in self.envelopes[1].iter_errors(message):
                shown = answer.decode("utf-8", "replace").rstrip("\n")[:300]
                raise ExecFailure(
                    f"{op}: response line {shown!r} is not a valid exec_response "
                    f"(--validate-adapter): {describe_error(error)}",
                    ("ADP-015",),
                )
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, dict) else None
            raise ExecFailure(f"{op} failed in the adapter: {text if isinstance(text, str) else error!r}", ("ADP-013",))
        return message["output"]

    def _account(self, process: _Process, op: str, what: str) -> str:
        time.sleep(0.05)  # let the stderr reader catch the adapter's last words
        tail = bytes(process.stderr).decode("utf-8", "replace").strip()
        return f"{op}: {what}; adapter command {self.command!r}; end of its stderr:\n{tail or '(empty)'}"


class ExecTarget:
    """Operations as attributes, so an exec adapter is called like a Python one."""

    def __init__(self, adapter: ExecAdapter) -> None:
        self._adapter = adapter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._adapter.tiers:
            raise AttributeError(name)
        return lambda payload: self._adapter.call(name, payload)
