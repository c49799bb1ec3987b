"""Calling a process operation with a deadline, and proving afterwards that no process survived.

Every run gets a fresh token in its environment; fakes and anything they start inherit it.
After the call, /proc is searched for processes still carrying a token: "no process of the
scenario is alive" is checked, not assumed, and survivors are killed so they cannot leak into
later tests even when this one fails.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.blame import Violation
from conformance.process_owners import OWNERS

RUN_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_RUN"
AREAS = {"run_claude_code": "claude-code", "run_codex": "codex"}  # the product area of each process operation
HANG = ("ADP-018",)  # a call that does not answer in time is a hang
MISCOUNTED = ("ADP-012",)  # an answer of the wrong shape
DEFAULT_DEADLINE = 20.0  # seconds one call may take before the adapter counts as hung

Json = Any


@dataclass(frozen=True)
class Survivor:
    pid: int
    argv: list[str]
    token: str = ""  # the run token it carries

    def __str__(self) -> str:
        return f"pid {self.pid}: {' '.join(self.argv)[:200]}"


def new_token() -> str:
    return f"run-{uuid.uuid4().hex}"


# A process in the middle of exec has no environment to read yet: its parent's fork returned
# (subprocess.Popen returns once exec is past its point of no return) but the new image's
# environment is not set up, so /proc/PID/environ reads empty or refuses. Such a process is
# read again a few times; one that stays unreadable (another user's, or init) is remembered
# by its start time and not waited for again.
_UNSETTLED = object()
_SETTLE_PAUSE = 0.005
_SETTLE_TRIES = 20
_PF_KTHREAD = 0x00200000
_UNREADABLE: set[tuple[int, str]] = set()  # (pid, start time) of processes found unreadable for good


def carrying(tokens: set[str], variable: str = RUN_TOKEN_VARIABLE) -> list[Survivor]:
    """Live (non-zombie) processes whose environment carries one of ``tokens`` in ``variable``."""
    needles = {f"{variable}={token}".encode(): token for token in tokens}
    found: list[Survivor] = []
    unsettled: list[Path] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        seen = _read_survivor(entry, needles)
        if seen is _UNSETTLED:
            unsettled.append(entry)
        elif isinstance(seen, Survivor):
            found.append(seen)
    for _ in range(_SETTLE_TRIES):
        if not unsettled:
            break
        time.sleep(_SETTLE_PAUSE)
        again = []
        for entry in unsettled:
            seen = _read_survivor(entry, needles)
            if seen is _UNSETTLED:
                again.append(entry)
            elif isinstance(seen, Survivor):
                found.append(seen)
        unsettled = again
    for entry in unsettled:
        with contextlib.suppress(OSError, IndexError):
            _UNREADABLE.add((int(entry.name), _stat(entry)[19]))
    return found


def _stat(entry: Path) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first)."""
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()


def _read_survivor(entry: Path, needles: dict[bytes, str]) -> Survivor | object | None:
    """The process as a Survivor if it carries a needle, None if not (or gone, or a zombie),
    _UNSETTLED if its environment cannot be read yet."""
    try:
        environ = (entry / "environ").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None  # gone, or a kernel thread
    except OSError:
        environ = b""
    try:
        if not environ:
            fields = _stat(entry)
            if fields[0] in ("Z", "X") or int(fields[6]) & _PF_KTHREAD:
                return None
            return None if (int(entry.name), fields[19]) in _UNREADABLE else _UNSETTLED
        token = next((t for n, t in needles.items() if b"\0" + n + b"\0" in b"\0" + environ), None)
        if token is None:
            return None
        if _stat(entry)[0] == "Z":
            return None  # exited; only its parent's wait is missing
        argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except (OSError, IndexError, ValueError):
        return None  # gone meanwhile
    return Survivor(int(entry.name), [a for a in argv if a], token)


def kill(survivors: list[Survivor]) -> None:
    for survivor in survivors:
        with contextlib.suppress(OSError):
            os.kill(survivor.pid, signal.SIGKILL)


class ProcessTierFailure(Violation):
    """A process operation hung, or left processes of its runs alive: a hang blames the deadline
    requirement, a survivor the cleanup requirement of its run (a start() rejection's or
    dispose()'s), nothing else."""


def cleanup_requirements(operation: str, outcome: Json) -> tuple[str, ...]:
    """What a process surviving this run's outcome breaks: startup cleanup after a start()
    rejection, else dispose() settling only after the tree exited."""
    owners = OWNERS[AREAS[operation]]
    rejected = isinstance(outcome, dict) and isinstance(outcome.get("start"), dict) and "rejected" in outcome["start"]
    return owners.cleanup_startup if rejected else owners.cleanup_dispose


# While calls are played ahead (conformance/ahead.py): how to stop them, so that any other call
# is the adapter's only process call in flight.
_ahead: list[Callable[[], None]] = []
_in_ahead = threading.local()


def before_other_calls(stop: Callable[[], None]) -> None:
    """Register what every call not played ahead runs first (one per session playing ahead:
    a nested session's pool stops its outer one's too)."""
    _ahead.append(stop)


def no_longer_before_other_calls(stop: Callable[[], None]) -> None:
    with contextlib.suppress(ValueError):
        _ahead.remove(stop)


@contextlib.contextmanager
def played_ahead() -> Iterator[None]:
    """The calls of this thread are the ones played ahead."""
    _in_ahead.on = True
    try:
        yield
    finally:
        _in_ahead.on = False


def call_runs(adapter: Any, operation: str, runs: list[Json], deadline: float = DEFAULT_DEADLINE) -> list[Json]:
    """Call ``operation`` on ``runs`` (each gains a token), within ``deadline`` seconds; check and clean up."""
    if not getattr(_in_ahead, "on", False):
        for stop in list(_ahead):
            stop()
    tokens = [new_token() for _ in runs]
    request = {
        "runs": [
            {**run, "env": {**run["env"], RUN_TOKEN_VARIABLE: token}} for run, token in zip(runs, tokens, strict=True)
        ]
    }
    answer: list[Any] = []
    error: list[BaseException] = []

    def call() -> None:
        try:
            answer.append(adapter.call(operation, request))
        except BaseException as exc:  # re-raised in the test's thread
            error.append(exc)

    # In the caller's context: the call is checked against the operations its own test declares.
    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(call,), name=f"{operation}-call", daemon=True)
    worker.start()
    worker.join(deadline)
    alive = carrying(set(tokens))
    kill(alive)
    survivors = {token: [s for s in alive if s.token == token] for token in tokens}
    if worker.is_alive():
        raise ProcessTierFailure(
            HANG,
            operation=operation,
            input=request,
            expected=f"an answer within {deadline:g} s",
            actual="no answer (the adapter hangs)",
            detail=f"{operation} did not answer within {deadline:g} s; {len(alive)} process(es) of its runs were "
            "still alive and have been killed" + "".join(f"\n  {s}" for s in alive),
        )
    if error:
        raise error[0]
    outcomes: list[Json] = answer[0]["runs"]
    if len(outcomes) != len(runs):
        raise ProcessTierFailure(
            MISCOUNTED,
            operation=operation,
            input=request,
            expected=f"{len(runs)} outcome(s)",
            actual=outcomes,
            detail=f"{operation} answered {len(outcomes)} outcome(s) for {len(runs)} run(s)",
        )
    if alive:
        blamed = [
            r
            for token, outcome in zip(tokens, outcomes, strict=True)
            if survivors[token]
            for r in cleanup_requirements(operation, outcome)
        ]
        raise ProcessTierFailure(
            blamed,
            operation=operation,
            input=request,
            expected="no process of any run alive once the call answered",
            actual=[str(s) for s in alive],
            detail=f"{operation} answered, but {len(alive)} process(es) of its runs were still alive "
            "(no process may outlive dispose() or a start() rejection); they have been killed",
            sections={
                f"survivors of run {index}": "\n".join(str(s) for s in survivors[token])
                for index, token in enumerate(tokens)
                if survivors[token]
            },
        )
    return outcomes
