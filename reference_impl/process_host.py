"""The host's side of a process operation (run_claude_code, run_codex), shared by both drivers.

Each RUN of one call is started with its cancellation armed as the RUN says, every run is
started before any is disposed (so that they overlap), then its result is taken and dispose()
called twice. A RUN may also inject faults into teardown steps; the canary message they fail
with must never reach any text.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from reference_impl.process_admission import StartRejected

Json = dict[str, Any]

RUN_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_RUN"
FAULT_PREFIX = "FAULT-"


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
