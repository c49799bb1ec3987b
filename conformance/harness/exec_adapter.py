"""Adapters in any language: ``--impl=exec:COMMAND`` speaks the operations as JSON lines.

The suite owns the adapter process: it runs in its own process group, every call has a
deadline, and a crashed, hung or babbling adapter fails the current test with the tail of
its stderr and is replaced by a fresh process for the next call. Nothing outlives the run:
every adapter process carries a token in its environment, and whatever still carries it
after the adapter is killed or closed (a grandchild that left the group with setsid) is
named and killed. The lines themselves (read, written, parsed) are exec_lines's; this module
owns the process and the calls.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from conformance.harness.exec_lines import EOF, Cut, Overlong, ResponseLines, parse_line, request_line, write_request
from conformance.harness.processes import Survivor, carrying, kill, new_token
from conformance.spec import Spec, describe_error, operations_schema
from conformance.spec.schema_errors import elide

ADAPTER_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_ADAPTER"
EXIT_REAP = 0.5  # seconds an adapter whose stdout closed is given to exit, to be named by its status
ONLY_JSON_LINES = "stdout carries only JSON lines, one exec response each; write logs and banners to stderr"


class ExecFailure(AssertionError):
    """The adapter process failed the current call (crash, hang, malformed or error answer);
    ``requirements`` is the exec-protocol requirement the failure shows, and ``hung`` says in
    a few words how the call waited out its deadline, when it did (the Adapter calls a hung
    operation no more: repeats.py)."""

    def __init__(self, message: str, requirements: tuple[str, ...] = ("ADP-019",), hung: str | None = None) -> None:
        super().__init__(message)
        self.requirements = requirements
        self.hung = hung


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


@dataclass
class _Process:
    """One adapter process, and what the suite asked of it so far."""

    popen: subprocess.Popen[bytes]
    token: str
    lines: ResponseLines
    stderr: bytearray = field(default_factory=bytearray)
    next_id: int = 1
    asked: dict[int, str] = field(default_factory=dict)  # request id -> operation, answered or not


# Interpreters that, given no program, read one from stdin: they take the requests for a script and never answer.
_INTERPRETER = re.compile(
    r"(node(js)?|python[0-9.]*|pypy[0-9.]*|deno|bun|ruby|perl|php|lua|tsx|ts-node|[a-z]*sh)(\.exe)?"
)


def bare_interpreter(argv: list[str]) -> str:
    """Why a command that hung at describe may be an unquoted one: the shell split
    ``--impl=exec:node adapter.js`` and pytest got ``exec:node`` alone (adapter.js became a path
    argument), so node waits for its program on stdin. Empty for any other command."""
    if len(argv) != 1 or not _INTERPRETER.fullmatch(Path(argv[0]).name):
        return ""
    return (
        f" ({argv[0]} alone is an interpreter with no program: it reads one from stdin and never answers; "
        f'quote the whole command, e.g. --impl="exec:{argv[0]} adapter.js")'
    )


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
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:  # an unterminated quote or escape
            raise ExecStartError(
                f"cannot split {command!r} into words by shell rules: {exc}", "malformed-impl"
            ) from None
        self.limits = limits
        self.tiers = {row["operation"]: row["tier"] for row in spec.table("adapter-protocol", "operations").rows}
        self._process: _Process | None = None
        self._unresponsive: str | None = None  # why the adapter is not restarted again, once a restart hung
        self.declaration: Any = None
        self.tokens: set[str] = set()  # of every process started, for the final search

    # ------------------------------------------------------------------ process

    def _start(self) -> _Process:
        token = new_token()
        try:
            popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so the whole tree can be killed
                env={**os.environ, ADAPTER_TOKEN_VARIABLE: token},  # inherited by all it starts, in any group
            )
        except OSError as exc:
            raise ExecStartError(f"cannot start {self.command!r}: {exc}", "exec-not-started") from None
        self.tokens.add(token)
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        os.set_blocking(popen.stdin.fileno(), False)  # never blocking: see write_request
        lines = ResponseLines(popen.stdout.fileno(), self.limits.response_line_max, self.limits.shown_value_max * 4)
        process = _Process(popen, token, lines)
        threading.Thread(target=self._read_tail, args=(popen.stderr, process.stderr), daemon=True).start()
        self._process = process
        return process

    def _read_tail(self, stream: IO[bytes], tail: bytearray) -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            tail.extend(chunk)
            del tail[: max(0, len(tail) - self.limits.stderr_tail)]

    @staticmethod
    def _kill_group(process: _Process) -> list[Survivor]:
        """Kill the adapter's group, then anything else still carrying its token; return those."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.popen.pid, signal.SIGKILL)  # the adapter and anything it started
        process.popen.wait()
        for pipe in (process.popen.stdin, process.popen.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        survivors = carrying({process.token}, ADAPTER_TOKEN_VARIABLE)
        kill(survivors)
        return survivors

    def _kill(self, process: _Process) -> str:
        """Kill ``process`` and its strays; the sentence that names the strays, if any."""
        survivors = self._kill_group(process)
        if self._process is process:
            self._process = None
        return _strays(survivors)

    def close(self) -> list[Survivor]:
        """End of the run: close stdin, allow the grace period, then kill the whole group and any
        process of any adapter of this command still alive; return the ones that were."""
        process, self._process = self._process, None
        survivors: list[Survivor] = []
        if process is not None:
            with contextlib.suppress(OSError):
                assert process.popen.stdin is not None
                process.popen.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(timeout=self.limits.shutdown_grace)
            survivors = self._kill_group(process)
        late = [s for s in carrying(self.tokens, ADAPTER_TOKEN_VARIABLE) if s.pid not in {x.pid for x in survivors}]
        kill(late)
        return survivors + late

    # ------------------------------------------------------------------ calls

    def describe(self) -> Any:
        """Start a process and ask for its declaration (the first request of every process)."""
        process = self._start()
        try:
            self.declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
        except ExecFailure as exc:
            hint = bare_interpreter(self.argv) if exc.hung is not None else ""
            raise ExecStartError(f"{self.command!r} did not describe itself{hint}: {exc}", "no-declaration") from None
        return self.declaration

    def call(self, op: str, payload: Any) -> Any:
        process = self._process
        if process is None:
            if self._unresponsive is not None:  # one restart that hangs costs one deadline, not one per call
                raise ExecFailure(f"{op}: not sent: {self._unresponsive}", ("ADP-018",), self._unresponsive)
            process = self._start()
            try:
                declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
            except ExecFailure as exc:
                if exc.hung is not None:
                    self._unresponsive = f"the adapter restarted for an earlier call hung at describe ({exc.hung})"
                raise
            if declaration != self.declaration:
                strays = self._kill(process)
                raise ExecFailure(f"the restarted adapter describes itself differently: {declaration!r}{strays}")
        timeout = self.limits.process_call_timeout if self.tiers.get(op) == "process" else self.limits.pure_call_timeout
        return self._exchange(process, op, payload, timeout)

    def _send(self, process: _Process, op: str, payload: Any, deadline: float) -> int:
        request_id = process.next_id
        process.next_id += 1
        process.asked[request_id] = op
        request = {"id": request_id, "op": op, "input": payload}
        if self.envelopes is not None:
            for error in self.envelopes[0].iter_errors(request):  # the suite's own line: a suite bug
                raise AssertionError(f"the suite built an invalid exec request: {describe_error(error)}")
        write_request(process.popen, process.lines, request_line(request), deadline)
        return request_id

    def _receive(self, process: _Process, op: str, deadline: float, timeout: float) -> object:
        """The next stdout line, or EOF; an exit is noticed even while a child holds stdout open."""
        lines = process.lines
        while (line := lines.take()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                strays = self._kill(process)
                what = f"no answer within {timeout:g} s"
                raise ExecFailure(self._account(process, op, f"{what} (hung; killed){strays}"), ("ADP-018",), what)
            if not lines.pump(min(left, 0.1)) and process.popen.poll() is not None:
                while lines.pump(0.05) and not lines.ready:
                    pass  # exited; a line already written still counts
                return lines.take() or EOF
        return line

    def _exchange(self, process: _Process, op: str, payload: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        process.lines.pump(0)
        stale = process.lines.take()  # a line nobody asked for since the last answer
        request_id = self._send(process, op, payload, deadline)
        answer = stale if stale is not None else self._receive(process, op, deadline, timeout)
        if answer is EOF:  # its exit says what happened; one that closed stdout and lives on is not waited for
            status = self._reap(process, deadline)
            closed = "; its stdout closed" if process.lines.ended else ""
            half = bytes(process.lines.buffer)  # written before an exit while a child holds stdout open
            cut = f", after half a line {elide(half.decode('utf-8', 'replace'), self.limits.shown_value_max)!r}"
            strays = self._kill(process)
            if status is None:
                what = f"the adapter closed its stdout without answering and was still running {EXIT_REAP:g} s later"
                raise ExecFailure(self._account(process, op, f"{what} (killed){strays}"))
            what = f"the adapter ended ({_how(status)}) without answering{cut + ' (no newline)' if half else ''}"
            raise ExecFailure(
                self._account(process, op, f"{what}{closed}{strays}"), ("ADP-019", "ADP-015") if half else ("ADP-019",)
            )
        limit = self.limits.shown_value_max
        if isinstance(answer, Overlong):
            strays = self._kill(process)
            shown = elide(answer.start.decode("utf-8", "replace"), limit)
            raise ExecFailure(
                self._account(
                    process, op, f"response line refused: longer than response_line_max "
                    f"({self.limits.response_line_max} bytes) of the spec's exec_limits; it starts {shown!r}{strays}",
                ),
                ("ADP-015", "ADP-016"),
            )  # fmt: skip
        assert isinstance(answer, bytes)
        reason, message = self._refusal(process, request_id, op, answer)
        if reason is not None or self.envelopes is not None:  # only a line that may be refused is shown
            shown = elide(answer.decode("utf-8", "replace").rstrip("\n"), limit)
        if reason is not None and isinstance(answer, Cut):  # half a line, then stdout closed: say how it ended
            status = self._reap(process, deadline)
            strays = self._kill(process)
            ended = f"was still running {EXIT_REAP:g} s later (killed)" if status is None else f"ended ({_how(status)})"
            what = f"the adapter wrote half a line {shown!r} (no newline), closed its stdout and {ended}"
            raise ExecFailure(self._account(process, op, f"{what}: {reason}{strays}"), ("ADP-019", "ADP-015"))
        if reason is not None:
            strays = self._kill(process)
            refused = ("ADP-015",) if message is None else ("ADP-016",)  # not an object at all, or a wrong id/shape
            raise ExecFailure(
                self._account(process, op, f"malformed response line {shown!r}: {reason}{strays}"), refused
            )
        if self.envelopes is not None:
            for error in self.envelopes[1].iter_errors(message):
                raise ExecFailure(
                    f"{op}: response line {shown!r} is not a valid exec_response "
                    f"(--validate-adapter): {describe_error(error, limit)}",
                    ("ADP-015",),
                )
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, dict) else None
            said = text if isinstance(text, str) else repr(error)
            raise ExecFailure(f"{op} failed in the adapter: {elide(said, limit)}", ("ADP-013",))
        return message["output"]

    @staticmethod
    def _refusal(process: _Process, request_id: int, op: str, answer: bytes) -> tuple[str | None, Any]:
        """Why a response line cannot be the answer to ``request_id`` (None if it can), and its message."""
        try:
            message = parse_line(answer)
        except RecursionError:  # the suite's own parser gave up: the line may be JSON, it is not the adapter raising
            return (
                f"nested too deep to read (beyond Python's recursion limit, {sys.getrecursionlimit()}, "
                "the depth of JSON the suite parses)"
            ), None
        except UnicodeDecodeError as exc:  # before ValueError, which it is: the bytes, not the JSON
            return f"not UTF-8 (byte 0x{answer[exc.start]:02x} at offset {exc.start}; exec lines are UTF-8)", None
        except json.JSONDecodeError:
            return f"not JSON ({ONLY_JSON_LINES})", None
        except ValueError:  # valid JSON, but an integer longer than int() reads from text
            return (
                f"an integer of more than {sys.get_int_max_str_digits()} digits (Python's integer-string "
                "limit, beyond which the suite cannot read a number)"
            ), None
        if not isinstance(message, dict):
            return f"not a JSON object ({ONLY_JSON_LINES})", None
        got = message.get("id")
        if got != request_id or isinstance(got, bool):
            if isinstance(got, int) and not isinstance(got, bool) and got in process.asked and got < request_id:
                return (
                    f"duplicate answer to id {got} (the {process.asked[got]} request, answered already); "
                    f"expected the answer to id {request_id} ({op})"
                ), message
            return f"wrong id {got!r}, expected {request_id}", message
        if ("output" in message) == ("error" in message):
            return "an exec response has exactly one of output and error", message
        return None, message

    @staticmethod
    def _reap(process: _Process, deadline: float) -> int | None:
        """The adapter's exit status once its stdout is closed, waiting at most EXIT_REAP (and
        not past the call's deadline); None while it still runs."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return process.popen.wait(timeout=max(0.0, min(EXIT_REAP, deadline - time.monotonic())))
        return None

    def _account(self, process: _Process, op: str, what: str) -> str:
        time.sleep(0.05)  # let the stderr reader catch the adapter's last words
        tail = bytes(process.stderr).decode("utf-8", "replace").strip()
        return f"{op}: {what}; adapter command {self.command!r}; end of its stderr:\n{tail or '(empty)'}"


def _how(status: int) -> str:
    return f"killed by signal {-status}" if status < 0 else f"exit status {status}"


def _strays(survivors: list[Survivor]) -> str:
    if not survivors:
        return ""
    return (
        f"; {len(survivors)} process(es) it started outlived it (outside its process group) and were killed:"
        + "".join(f"\n  {s}" for s in survivors)
    )


class ExecTarget:
    """Operations as attributes, so an exec adapter is called like a Python one."""

    def __init__(self, adapter: ExecAdapter) -> None:
        self._adapter = adapter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._adapter.tiers:
            raise AttributeError(name)
        return lambda payload: self._adapter.call(name, payload)
