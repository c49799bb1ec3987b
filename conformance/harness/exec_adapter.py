"""Adapters in any language: ``--impl=exec:COMMAND`` speaks the operations as JSON lines.

The suite owns the adapter process: it runs in its own process group, every call has a
deadline, and a crashed, hung or babbling adapter fails the current test with the tail of
its stderr and is replaced by a fresh process for the next call. Nothing outlives the run,
however it detached: the suite is a child subreaper, so an orphan below it is re-parented to
it and found as a child it never started (processes.py says why this, and not the token or a
cgroup); the process tree below a live adapter is read too, and every adapter process carries
a token in its environment as a last net. Whatever is found once the adapter is killed or closed
is named and killed. The lines themselves (read, written, parsed) are exec_lines's; this module
owns the process and the calls.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import IO, Any

from conformance.harness.exec_lines import (
    EOF,
    Cut,
    Overlong,
    ResponseLines,
    answered_again,
    refusal,
    request_line,
    write_request,
)
from conformance.harness.exec_texts import Limits, bare_interpreter, how, strays_sentence
from conformance.harness.processes import (
    Survivor,
    adopted,
    become_subreaper,
    carrying,
    describe,
    kill,
    kill_pids,
    kill_tree,
    new_token,
    reap,
    state,
)
from conformance.spec import Spec, describe_error, operations_schema
from conformance.spec.schema_errors import elide

ADAPTER_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_ADAPTER"
STDERR_SETTLE = 0.05  # at most this long for a failed adapter's stderr to end, so that its last words are shown


class ExecFailure(AssertionError):
    """The adapter process failed the current call (crash, hang, malformed or error answer);
    ``requirements`` is the exec-protocol requirement the failure shows, and ``hung`` says in
    a few words how the call waited out its deadline, or why no answer could ever come (stdout
    closed, the process alive), when so (the Adapter calls such an operation no more: repeats.py)."""

    def __init__(
        self,
        message: str,
        requirements: tuple[str, ...] = ("ADP-019",),
        hung: str | None = None,
        oversized: bool = False,
    ) -> None:
        super().__init__(message)
        self.requirements = requirements
        self.hung = hung
        self.oversized = oversized  # a line beyond response_line_max: the operation is not called again
        self.stuck = "hung"  # how an operation that cannot answer (``hung`` set) is named when not called again


class UnaskedLine(UserWarning):
    """An exec adapter wrote a line after its last answer that no request asked for."""


class ExecStartError(Exception):
    """The adapter could not be started or did not describe itself; ``condition`` says which."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


@dataclass
class _Process:
    """One adapter process, and what the suite asked of it so far."""

    popen: subprocess.Popen[bytes]
    token: str
    lines: ResponseLines
    stderr: bytearray = field(default_factory=bytearray)
    next_id: int = 1
    asked: dict[int, str] = field(default_factory=dict)  # request id -> operation, answered or not
    reader: threading.Thread | None = None  # copies its stderr into ``stderr`` until the pipe ends


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
        self._unresponsive: tuple[str, tuple[str, ...]] | None = None  # why not restarted again, and the rule
        self.declaration: Any = None
        self.tokens: set[str] = set()  # of every process started, for the final search
        self.shutdown: str | None = None  # how the last process took end of input, once closed (ADP-020)
        self.stray_search = become_subreaper()  # orphans below the suite are re-parented to it (processes.py)

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
        process.reader = threading.Thread(target=self._read_tail, args=(popen.stderr, process.stderr), daemon=True)
        process.reader.start()
        self._process = process
        return process

    def _read_tail(self, stream: IO[bytes], tail: bytearray) -> None:
        """Keep the end of stderr; closed here at its end, the one pipe no kill closes."""
        with stream:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                tail.extend(chunk)
                del tail[: max(0, len(tail) - self.limits.stderr_tail)]

    def _kill_group(self, process: _Process) -> list[Survivor]:
        """Kill the adapter's group and all below it (processes.kill_tree); close its pipes;
        return the processes that had left its group, killed and reaped."""
        survivors = kill_tree(process.popen, {process.token}, ADAPTER_TOKEN_VARIABLE, self._pids())
        for pipe in (process.popen.stdin, process.popen.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        return survivors

    def _pids(self) -> set[int]:
        """The pid of the adapter process now serving this command (not an orphan)."""
        return {self._process.popen.pid} if self._process is not None else set()

    def _kill(self, process: _Process) -> str:
        """Kill ``process`` and its strays; the sentence that names the strays, if any."""
        survivors = self._kill_group(process)
        if self._process is process:
            self._process = None
        return strays_sentence(survivors)

    def close(self, grace: float | None = None) -> list[Survivor]:
        """End of the run: close stdin, allow the grace period (``grace``, 0 when the run was
        terminated), then kill the whole group and any process of any adapter of this command
        still alive; return the ones that were. How the adapter took end of input is kept in
        ``shutdown`` (ADP-020): "exited" (status 0 within the grace), or what happened instead."""
        process, self._process = self._process, None
        survivors: list[Survivor] = []
        if process is not None:
            with contextlib.suppress(OSError):
                assert process.popen.stdin is not None
                process.popen.stdin.close()
            wait = self.limits.shutdown_grace if grace is None else grace
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(timeout=wait)
            status = process.popen.poll()
            if grace is not None:  # no grace given (a terminated run): end of input was not tried
                self.shutdown = None
            elif status is None:
                self.shutdown = f"was still running {wait:g} s (shutdown_grace) after its stdin closed, and was killed"
            else:
                self.shutdown = "exited" if status == 0 else f"ended with {how(status)} after its stdin closed"
            survivors = self._kill_group(process)
        known = {x.pid for x in survivors}
        late = [s for s in carrying(self.tokens, ADAPTER_TOKEN_VARIABLE) if s.pid not in known]
        kill(late)
        orphans = adopted(set())  # of an adapter killed earlier in the run, adopted since
        late += [s for s in map(describe, orphans) if s is not None and s.pid not in known | {x.pid for x in late}]
        kill_pids(orphans)
        reap(orphans)
        return survivors + late

    # ------------------------------------------------------------------ calls

    def describe(self) -> Any:
        """Start a process and ask for its declaration (the first request of every process)."""
        process = self._start()
        try:
            self.declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
        except ExecFailure as exc:
            hint = bare_interpreter(self.argv) if exc.hung is not None and exc.stuck == "hung" else ""
            raise ExecStartError(f"{self.command!r} did not describe itself{hint}: {exc}", "no-declaration") from None
        return self.declaration

    def call(self, op: str, payload: Any) -> Any:
        process = self._process
        if process is not None and (stale := self._stale(process)):
            warnings.warn(UnaskedLine(stale), stacklevel=2)  # the earlier call's fault: this one starts afresh
            process = None
        if process is None:
            if self._unresponsive is not None:  # one restart that hangs costs one deadline, not one per call
                why, rules = self._unresponsive
                raise ExecFailure(f"{op}: not sent: {why}", rules, why)
            process = self._start()
            try:
                declaration = self._exchange(process, "describe", {}, self.limits.describe_timeout)
            except ExecFailure as exc:
                if exc.hung is not None:
                    earlier = f"the adapter restarted for an earlier call {exc.stuck} at describe"
                    self._unresponsive = f"{earlier} ({exc.hung})", exc.requirements
                raise
            if declaration != self.declaration:
                strays = self._kill(process)
                raise ExecFailure(f"the restarted adapter describes itself differently: {declaration!r}{strays}")
        timeout = self.limits.process_call_timeout if self.tiers.get(op) == "process" else self.limits.pure_call_timeout
        return self._exchange(process, op, payload, timeout)

    def _stale(self, process: _Process) -> str:
        """A line the process wrote after its last answer, when nobody asked (a late second answer,
        a log line): named, and the process killed, so that the call now due starts with a fresh
        one. Empty when there is none."""
        process.lines.pump(0)
        stale = process.lines.take()
        if stale is None:
            return ""
        text = elide(stale.decode("utf-8", "replace").rstrip("\n"), self.limits.shown_value_max) if isinstance(
            stale, bytes) else "the end of its stdout" if stale is EOF else "an overlong line"  # fmt: skip
        strays = self._kill(process)
        return (
            f"the exec adapter wrote a line after its last answer, unasked ({text!r}); it was restarted so "
            f"that the next call does not take it for its answer (ADP-016){strays}"
        )

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
        stopped: float | None = None  # since when the adapter is seen stopped
        while (line := lines.take()) is None:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                strays = self._kill(process)
                what = f"no answer within {timeout:g} s"
                raise ExecFailure(self._account(process, op, f"{what} (hung; killed){strays}"), ("ADP-018",), what)
            if not lines.pump(min(left, 0.1)) and process.popen.poll() is not None:
                while lines.pump(0.05) and not lines.ready:
                    pass  # exited; a line already written still counts
                return lines.take() or EOF
            if lines.ready:
                continue
            # Stopped (SIGSTOP, SIGTSTP): not hung, and not worth its deadline: no one continues it here.
            stopped = (stopped or now) if state(process.popen.pid) in ("T", "t") else None
            if stopped is not None and now - stopped >= self.limits.stopped_grace:
                strays = self._kill(process)
                what = (
                    f"the adapter was stopped (by SIGSTOP or SIGTSTP) for {self.limits.stopped_grace:g} s "
                    f"(stopped_grace) without answering; killed, and restarted for the next call{strays}"
                )
                raise ExecFailure(self._account(process, op, what), ("ADP-019",))
        return line

    def _exchange(self, process: _Process, op: str, payload: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        process.lines.pump(0)
        stale = process.lines.take()  # before describe: what the process wrote at start (a banner)
        request_id = self._send(process, op, payload, deadline)
        answer = stale if stale is not None else self._receive(process, op, deadline, timeout)
        limit = self.limits.shown_value_max
        if answer is EOF:  # its exit says what happened; one that closed stdout and lives on is not waited for
            status = self._reap(process, deadline)
            closed = "; its stdout closed" if process.lines.ended else ""
            half = bytes(process.lines.buffer)  # written before an exit while a child holds stdout open
            cut = f"\n  the half line: {elide(half.decode('utf-8', 'replace'), limit)!r}" if half else ""
            strays = self._kill(process)
            if status is None:  # it can never answer: like a hang, not worth an exit_reap in every later call
                what = "the adapter closed its stdout without answering and was still running"
                what += f" {self.limits.exit_reap:g} s later"
                failure = ExecFailure(self._account(process, op, f"{what} (killed){strays}"), hung=what)
                failure.stuck = "closed its stdout and kept running"
                raise failure
            what = f"the adapter ended ({how(status)}) without answering"
            what += ", after half a line (no newline)" if half else ""
            raise ExecFailure(
                self._account(process, op, f"{what}{closed}{strays}", cut),
                ("ADP-019", "ADP-015") if half else ("ADP-019",),
            )
        if isinstance(answer, Overlong):
            strays = self._kill(process)
            shown = elide(answer.start.decode("utf-8", "replace"), limit)
            what = "response line refused: longer than response_line_max"
            what += f" ({self.limits.response_line_max} bytes) of the spec's exec_limits"
            raise ExecFailure(
                self._account(process, op, f"{what}{strays}", f"\n  it starts {shown!r}"),
                ("ADP-015", "ADP-016"),
                oversized=True,
            )
        assert isinstance(answer, bytes)
        reason, detail, message = refusal(answer, request_id, op, process.asked)
        if reason is not None or self.envelopes is not None:  # only a line that may be refused is shown
            shown = elide(answer.decode("utf-8", "replace").rstrip("\n"), limit)
            line = f"\n  the line: {shown!r}{detail}"  # below the first line, which the repeat short-cut compares
        if reason is not None and isinstance(answer, Cut):  # half a line, then stdout closed: say how it ended
            status = self._reap(process, deadline)
            strays = self._kill(process)
            ended = (
                f"was still running {self.limits.exit_reap:g} s later (killed)"
                if status is None
                else f"ended ({how(status)})"
            )
            what = f"the adapter wrote half a line (no newline), closed its stdout and {ended}: {reason}"
            raise ExecFailure(self._account(process, op, f"{what}{strays}", line), ("ADP-019", "ADP-015"))
        if reason is not None:
            strays = self._kill(process)
            refused = ("ADP-015",) if message is None else ("ADP-016",)  # not an object at all, or a wrong id/shape
            raise ExecFailure(self._account(process, op, f"malformed response line: {reason}{strays}", line), refused)
        if self.envelopes is not None:
            for error in self.envelopes[1].iter_errors(message):
                raise ExecFailure(
                    f"{op}: response line {shown!r} is not a valid exec_response "
                    f"(--validate-adapter): {describe_error(error, limit)}",
                    ("ADP-015",),
                )
        if answered_again(process.lines, request_id, deadline):  # the second answer fails this call, not the next one
            process.lines.take()  # read and dropped: the process is in step again and serves the next call
            what = "malformed response: the request was answered twice (two lines carry its id)"
            raise ExecFailure(self._account(process, op, what, f"\n  the request's id: {request_id}"), ("ADP-016",))
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, dict) else None
            said = text if isinstance(text, str) else repr(error)
            raise ExecFailure(f"{op} failed in the adapter: {elide(said, limit)}", ("ADP-013",))
        return message["output"]

    def _reap(self, process: _Process, deadline: float) -> int | None:
        """The adapter's exit status once its stdout is closed, waiting at most exit_reap (and
        not past the call's deadline); None while it still runs."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return process.popen.wait(timeout=max(0.0, min(self.limits.exit_reap, deadline - time.monotonic())))
        return None

    def _account(self, process: _Process, op: str, what: str, detail: str = "") -> str:
        """The failure's text: its first line says what happened in words that do not change from
        call to call (no id, no line: the repeat short-cut compares first lines); ``detail``, on the
        lines after it, what does."""
        if process.reader is not None and process.popen.poll() is not None:
            # The adapter's last words: its stderr ends once the group is killed; wait for that end, not a fixed time.
            process.reader.join(STDERR_SETTLE)
        tail = bytes(process.stderr).decode("utf-8", "replace").strip()
        return f"{op}: {what}; adapter command {self.command!r}{detail}\nend of its stderr:\n{tail or '(empty)'}"


class ExecTarget:
    """Operations as attributes, so an exec adapter is called like a Python one."""

    def __init__(self, adapter: ExecAdapter) -> None:
        self._adapter = adapter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._adapter.tiers:
            raise AttributeError(name)
        return lambda payload: self._adapter.call(name, payload)
