"""A pytest plugin for benchmarks/suite.py: where each conformance example's time goes.

Loaded with ``-p suite_probe`` into a run of any checkout of the suite, it wraps only what
every version has (Hypothesis' draw and execute_once, ``Adapter.call`` and the operation it
returns, jsonschema's ``iter_errors`` and, when present, ``conformance.harness.validation``) and
charges each moment of a test to the innermost of these categories:

    generation  Hypothesis drawing the example (ConjectureData.draw)
    oracle      the test body of an example: the oracle and its assertions
                (execute_once, less the draws and calls inside it; for a test without
                Hypothesis, the whole test function)
    validation  schema validation of inputs and answers
    call        the rest of Adapter.call: copies, the JSON round trip, dispatch
    adapter     the operation itself (for exec: the round trip and the adapter's work)
    rest        everything else of the test's setup, call and teardown (Hypothesis'
                engine, pytest, fixtures)

and records the CPU time of the pytest process per test beside its wall time (on a shared
machine the wall time of a suite run moves with other load; its own CPU time much less).

At the end of the session it replays every recorded operation call once without the
suite — the reference function called directly, or for exec a fresh adapter process fed
the same request lines by a bare loop — and writes everything as JSON to
``$SUITE_PROBE_OUT``. The probe's own bookkeeping is charged to no category and left out.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

VALIDATION_ENTRY_POINTS = ("first_problem",)  # conformance.harness.validation's calls, where a checkout has it
CATEGORIES = ("generation", "oracle", "validation", "call", "adapter")
_clock = time.perf_counter


class _Timer:
    """Exclusive time per category: entering a category pauses the one it is nested in."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # [category, started]
        self.spent: dict[str, float] = {}

    def enter(self, category: str) -> None:
        now = _clock()
        if self.stack:
            top = self.stack[-1]
            self.spent[top[0]] = self.spent.get(top[0], 0.0) + now - top[1]
        self.stack.append([category, now])

    def leave(self) -> None:
        now = _clock()
        category, started = self.stack.pop()
        self.spent[category] = self.spent.get(category, 0.0) + now - started
        if self.stack:
            self.stack[-1][1] = now

    def timed(self, category: str, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.enter(category)
            try:
                return func(*args, **kwargs)
            finally:
                self.leave()

        return wrapper

    def timed_iter(self, category: str, func: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        """For a generator function: time each step, since its work is done while iterated."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            self.enter(category)
            try:
                inner = func(*args, **kwargs)
            finally:
                self.leave()
            while True:
                self.enter(category)
                try:
                    item = next(inner)
                except StopIteration:
                    return
                finally:
                    self.leave()
                yield item

        return wrapper


TIMER = _Timer()
CALLS: list[tuple[str, str, str]] = []  # (test node id, operation, JSON input) in call order
EXAMPLES: dict[str, int] = {}
_current: list[str] = [""]


def _install() -> None:
    from hypothesis.core import StateForActualGivenExecution
    from hypothesis.internal.conjecture.data import ConjectureData

    draw = ConjectureData.draw
    timed_draw = TIMER.timed("generation", draw)

    def outer_draw(self: Any, *args: Any, **kwargs: Any) -> Any:
        stack = TIMER.stack  # a nested draw is generation already: time only the outermost
        return (draw if stack and stack[-1][0] == "generation" else timed_draw)(self, *args, **kwargs)

    ConjectureData.draw = outer_draw  # type: ignore[method-assign]
    execute_once = StateForActualGivenExecution.execute_once

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        EXAMPLES[_current[0]] = EXAMPLES.get(_current[0], 0) + 1
        return execute_once(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    StateForActualGivenExecution.execute_once = TIMER.timed("oracle", counted)  # type: ignore[method-assign]

    import jsonschema

    cls = jsonschema.Draft202012Validator  # evolve() keeps the class: every spec validator is one
    cls.iter_errors = TIMER.timed_iter("validation", cls.iter_errors)  # type: ignore[method-assign,assignment]
    try:
        from conformance import validation  # a checkout with compiled validation
    except ImportError:
        pass
    else:
        for name in VALIDATION_ENTRY_POINTS:
            if hasattr(validation, name):
                setattr(validation, name, TIMER.timed("validation", getattr(validation, name)))

    from conformance.harness.adapter import Adapter

    operation = Adapter.operation

    def recorded_operation(self: Adapter, name: str) -> Callable[[Any], Any]:
        func = operation(self, name)

        def call(payload: Any) -> Any:
            TIMER.enter("probe")
            CALLS.append((_current[0], name, json.dumps(payload)))
            TIMER.enter("adapter")
            try:
                return func(payload)
            finally:
                TIMER.leave()
                TIMER.leave()

        return call

    Adapter.operation = recorded_operation  # type: ignore[method-assign]
    Adapter.call = TIMER.timed("call", Adapter.call)  # type: ignore[method-assign]


_install()
ITEMS: list[dict[str, Any]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _current[0] = item.nodeid
    TIMER.spent.clear()
    TIMER.enter("rest")
    started, cpu = _clock(), time.process_time()
    yield
    total, cpu = _clock() - started, time.process_time() - cpu
    TIMER.leave()
    spent = dict(TIMER.spent)
    probe = spent.pop("probe", 0.0)
    row = {"nodeid": item.nodeid, "total": total - probe, "cpu": cpu, "examples": EXAMPLES.get(item.nodeid, 0)}
    row.update({c: spent.get(c, 0.0) for c in (*CATEGORIES, "rest")})
    ITEMS.append(row)


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Iterator[None]:
    # A test without Hypothesis is all test body; with it, what lies outside execute_once is
    # Hypothesis' engine (rest): decided once the test has run.
    TIMER.enter("body")
    yield
    TIMER.leave()
    body = TIMER.spent.pop("body", 0.0)
    key = "rest" if EXAMPLES.get(pyfuncitem.nodeid) else "oracle"
    TIMER.spent[key] = TIMER.spent.get(key, 0.0) + body


def _replay_in_process(adapter: Any) -> dict[str, float]:
    floor: dict[str, float] = {}
    for nodeid, name, payload in CALLS:
        func = getattr(adapter.target, name)
        value = copy.deepcopy(json.loads(payload))
        started = _clock()
        with contextlib.suppress(Exception):  # a failing call still took its time; the suite judged it
            func(value)
        floor[nodeid] = floor.get(nodeid, 0.0) + _clock() - started
    return floor


def _replay_exec(command: str) -> dict[str, float]:
    floor: dict[str, float] = {}
    child = subprocess.Popen(
        shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(b'{"id": 0, "op": "describe", "input": {}}\n')
        child.stdin.flush()
        child.stdout.readline()
        for n, (nodeid, name, payload) in enumerate(CALLS, 1):
            line = f'{{"id": {n}, "op": {json.dumps(name)}, "input": {payload}}}\n'.encode()
            started = _clock()
            child.stdin.write(line)
            child.stdin.flush()
            json.loads(child.stdout.readline())
            floor[nodeid] = floor.get(nodeid, 0.0) + _clock() - started
    finally:
        child.stdin.close()
        child.wait(timeout=10)
    return floor


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("SUITE_PROBE_OUT")
    if not out:
        return
    import conformance

    impl = session.config.getoption("impl")
    if impl.startswith("exec:"):
        floor = _replay_exec(impl.removeprefix("exec:"))
    else:
        from conformance.plugin import _session_key

        floor = _replay_in_process(session.config.stash[_session_key].adapter)
    calls: dict[str, int] = {}
    for nodeid, _, _ in CALLS:
        calls[nodeid] = calls.get(nodeid, 0) + 1
    for row in ITEMS:
        row["floor"] = floor.get(row["nodeid"], 0.0)
        row["calls"] = calls.get(row["nodeid"], 0)
    with open(out, "w", encoding="utf-8") as file:
        json.dump({"impl": impl, "suite": conformance.__file__, "items": ITEMS}, file)
