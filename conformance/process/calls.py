"""Calling a process operation with a deadline, and proving afterwards that no process survived.

Every run gets a fresh token in its environment (conformance/harness/processes.py finds what
carries it); after the call, survivors are killed and blamed on the cleanup rule of their run.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

from conformance.harness.processes import RUN_TOKEN_VARIABLE, carrying, kill, new_token
from conformance.process.owners import OWNERS
from conformance.verdict.blame import Violation

AREAS = {"run_claude_code": "claude-code", "run_codex": "codex"}  # the product area of each process operation
HANG = ("ADP-018",)  # a call that does not answer in time is a hang
MISCOUNTED = ("ADP-012",)  # an answer of the wrong shape
DEFAULT_DEADLINE = 20.0  # seconds one call may take before the adapter counts as hung

Json = Any


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


# While calls are played ahead (conformance/process/ahead.py): how to stop them, so that any other call
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
