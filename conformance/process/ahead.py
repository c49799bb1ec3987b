"""The process tier's calls, played ahead: started in the background as the run begins.

A test of the process tier spends most of its time waiting: on the fake's start, on its
scripted sleeps and hangs, on the grace between SIGTERM and SIGKILL. Played one after the
other, those waits were about a third of the main job. So when the run starts, the call of
every selected test marked :func:`plays` whose product the adapter claims is started on a small
thread pool — the same call its test would make (conformance.process.tier.call: deadline,
survivor scan) — while the pure tiers compute in the main thread; when the test runs, it
checks the outcome its call gave.

A correct implementation cannot be rejected for this: the contract asks a process operation to
overlap the runs *of one call* (ADP-007), not to take several calls at once. So an outcome
played ahead only ever passes a test. When its check fails, or the call raised, the calls ahead
stop (those not started are dropped, those in flight finish) and from then on every call is
made when its test runs, alone, as without this module: the failing test plays its call again,
and that run decides and is what a failure shows (the test's user property ``played ahead``
notes the difference). Any other process call (the real-products tier) waits for the same.
An adapter whose other operations cannot run while a process call is in flight in another
thread runs with ``--serial-process-tier``.

Only an in-process Python adapter is played ahead (an exec adapter serves one request at a
time on its pipes), and never in an xdist worker (it cannot know which tests it will get, and
the other workers fill the waits anyway).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.exec_adapter import ExecTarget
from conformance.process import calls
from conformance.process.scenarios import PlannedRun
from conformance.process.tier import call
from conformance.spec import Spec
from conformance.verdict import operations

Json = Any
# The runs of a test's call: from the spec, the test's parameters and a folder of its own.
Planner = Callable[[Spec, dict[str, Any], Path], list[PlannedRun]]
Check = Callable[[list[PlannedRun], list[Json]], None]
Played = Callable[[Check], None]
Outcome = tuple[list[PlannedRun], list[Json]]

MARKER = "played"
CALLS_AT_ONCE = 4  # calls in flight: each starts one fake or a few, most of them waiting
FAILED_AHEAD = "played ahead"  # the user property of a test whose call ahead failed and was played again


def plays(product: str, planner: Planner) -> pytest.MarkDecorator:
    """Mark a process-tier test whose one call of ``product``'s operation ``planner`` plans; the
    test gets it through the ``played`` fixture (conformance/conftest.py)."""
    marker: pytest.MarkDecorator = getattr(pytest.mark, MARKER)(product=product, planner=planner)
    return marker


class Ahead:
    """The calls started ahead, by test node id; each is taken by its test, at most once."""

    def __init__(self, adapter: Any, spec: Spec, folder: Callable[[str], Path]) -> None:
        self.adapter, self.spec, self.folder = adapter, spec, folder
        self._pool = ThreadPoolExecutor(max_workers=CALLS_AT_ONCE, thread_name_prefix="played-ahead")
        self._calls: dict[str, Future[Outcome]] = {}
        self._lock = threading.Lock()

    def start(self, items: Iterable[pytest.Item]) -> None:
        """Start the call of every marked test among ``items`` whose product the adapter claims, in run order."""
        for item in items:
            marker = item.get_closest_marker(MARKER)
            if marker is None or not self.adapter.claims("process_drivers", marker.kwargs["product"]):
                continue
            declared = operations.declaration(getattr(item, "module", None))
            args = (marker.kwargs["planner"], _params(item), self.folder(item.name), declared)
            self._calls[item.nodeid] = self._pool.submit(self._play, *args)
        if self._calls:
            calls.before_other_calls(self.stop)

    def _play(self, planner: Planner, params: dict[str, Any], folder: Path, declared: Any) -> Outcome:
        operations.RUNNING.set(declared)  # the call is its own test's, whatever test the main thread runs
        with calls.played_ahead():
            planned = planner(self.spec, params, folder)
            return planned, call(self.adapter, planned)

    def take(self, nodeid: str) -> Future[Outcome] | None:
        with self._lock:
            return self._calls.pop(nodeid, None)

    def stop(self) -> None:
        """No more calls ahead: from now on each call is made when its test runs, alone."""
        with self._lock:
            self._calls.clear()
        self.close()

    def close(self) -> None:
        """Drop the calls not started yet; wait for those in flight (each ends by its deadline,
        its survivors killed)."""
        calls.no_longer_before_other_calls(self.stop)
        self._pool.shutdown(wait=True, cancel_futures=True)


def can_play_ahead(config: pytest.Config, adapter: Any) -> bool:
    return (
        not config.getoption("serial_process_tier")
        and not hasattr(config, "workerinput")  # an xdist worker
        and not isinstance(getattr(adapter, "target", None), ExecTarget)
    )


def play(item: pytest.Item, ahead: Ahead | None, adapter: Any, spec: Spec, folder: Path, check: Check) -> None:
    """Check the outcome played ahead for ``item``; when there is none, or it does not pass, make
    the call now, alone, and check that (it decides)."""
    if ahead is not None and (future := ahead.take(item.nodeid)) is not None:
        try:
            planned, outcomes = future.result()
            check(planned, outcomes)
            return
        except Exception as exc:  # any failure ahead is played again alone, and that run decides
            item.user_properties.append((FAILED_AHEAD, f"failed ahead ({type(exc).__name__}), played again alone"))
            ahead.stop()  # alone means alone: no call ahead is in flight while it plays again
    marker = item.get_closest_marker(MARKER)
    assert marker is not None, f"{item.nodeid} uses the played fixture without @ahead.plays(...)"
    planned = marker.kwargs["planner"](spec, _params(item), folder)
    check(planned, call(adapter, planned))


def _params(item: pytest.Item) -> dict[str, Any]:
    """The test's parameters (none for a test that is not parametrized)."""
    return dict(getattr(getattr(item, "callspec", None), "params", {}))
