"""Whatever a Python operation raises is its failure (ADP-013), named with the operation:
KeyboardInterrupt, SystemExit and RecursionError included, while the user's own Ctrl-C still
stops the run. A 100,000-deep exec answer the suite's parser cannot read is refused as too deep
(ADP-015), not taken for the adapter raising."""

from __future__ import annotations

import copy
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import reference_impl
from conformance.harness.adapter import Adapter, AdapterResponseError, OperationError
from conformance.spec import load_spec
from tests.conftest import RunSuite, SuiteRun

FAULTS = Path(__file__).resolve().parents[1] / "fixtures" / "faults"
SPEC = load_spec()
REQUEST = SPEC.table("results", "render_vectors").rows[0]["result"]
RENDER = ("--pyargs", "conformance.test_results", "-k", "render_vector and upstream")


def _run(run_suite: RunSuite, fault: str, *, exec_form: bool = False) -> SuiteRun:
    impl = f"exec:{sys.executable} {FAULTS / 'fault_raises.py'}" if exec_form else "fault_raises"
    return run_suite("-q", *RENDER, impl=impl, importable=[FAULTS], env={"FAULT_RAISES": fault}, report=True)


@pytest.mark.requirement("ADP-013")
@pytest.mark.parametrize(
    ("fault", "raised"),
    [
        ("KeyboardInterrupt", "render_tool_result raised KeyboardInterrupt"),
        ("SystemExit", "render_tool_result raised SystemExit: 3"),
        ("RecursionError", "render_tool_result raised RecursionError: maximum recursion depth exceeded"),
    ],
)
def test_a_base_exception_an_operation_raises_is_its_failure(run_suite: RunSuite, fault: str, raised: str) -> None:
    done = _run(run_suite, fault)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert failed, done.tail
    assert all(t["blamed"] == ["ADP-013"] for t in failed), [(t["nodeid"], t["blamed"]) for t in failed]
    assert all(raised in t["message"] or raised in str(t["failures"]) for t in failed), failed[0]
    assert {f["operation"] for t in failed for f in t["failures"]} == {"render_tool_result"}
    assert done.violated() == ["ADP-013"]


@pytest.mark.requirement("ADP-013")
def test_the_users_interrupt_during_a_call_still_stops_the_run(run_suite: RunSuite) -> None:
    done = _run(run_suite, "user-interrupt")
    assert done.code == pytest.ExitCode.INTERRUPTED, done.tail
    assert "KeyboardInterrupt" in done.output, done.tail
    assert not done.failed(), done.failed()
    assert done.report["run"]["verdict"] == "incomplete", done.report["run"]
    assert done.report["run"]["incomplete"].startswith("interrupted by SIGINT"), done.report["run"]


@pytest.mark.requirement("ADP-015")
def test_an_exec_answer_too_deep_to_parse_is_refused_as_such(run_suite: RunSuite) -> None:
    done = _run(run_suite, "deep", exec_form=True)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert failed and all(t["blamed"] == ["ADP-015"] for t in failed), [(t["nodeid"], t["blamed"]) for t in failed]
    assert "nested too deep to read" in done.out, done.tail
    assert "raised RecursionError" not in done.out, done.tail


def _adapter(render: Callable[[Any], Any]) -> Adapter:
    """An adapter called on the main thread, as a process-tier call is (no pure-call deadline)."""
    return Adapter("test", dict(reference_impl.CONFORMANCE), SimpleNamespace(render_tool_result=render), SPEC)


@pytest.mark.requirement("ADP-013")
def test_on_the_main_thread_a_raised_interrupt_is_the_operations_and_a_sigint_the_users() -> None:
    def raises(request: Any) -> Any:
        raise KeyboardInterrupt

    def signalled(request: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(2)
        return reference_impl.render_tool_result(request)

    with pytest.raises(OperationError, match="render_tool_result raised KeyboardInterrupt"):
        _adapter(raises).call("render_tool_result", copy.deepcopy(REQUEST))
    with pytest.raises(KeyboardInterrupt):
        _adapter(signalled).call("render_tool_result", copy.deepcopy(REQUEST))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.requirement("ADP-012")
def test_a_python_answer_too_deep_to_copy_is_refused_as_such() -> None:
    def deep(request: Any) -> Any:
        answer = reference_impl.render_tool_result(request)
        nested: list[Any] = []
        for _ in range(100_000):
            nested = [nested]
        return {**answer, "extra": nested}

    with pytest.raises(AdapterResponseError, match="render_tool_result returned a value nested too deep to copy"):
        _adapter(deep).call("render_tool_result", copy.deepcopy(REQUEST))


@pytest.mark.requirement("ADP-015")
@pytest.mark.parametrize(
    ("fault", "named"),
    [
        ("bad-utf8", "not UTF-8 (exec lines are UTF-8); adapter command"),
        ("long-integer", "an integer of more than 4300 digits"),
    ],
)
def test_an_exec_line_the_suite_cannot_read_is_named_for_what_it_is(
    run_suite: RunSuite, fault: str, named: str
) -> None:
    done = _run(run_suite, fault, exec_form=True)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert failed and all(t["blamed"] == ["ADP-015"] for t in failed), [(t["nodeid"], t["blamed"]) for t in failed]
    assert named in done.out, done.tail
    assert fault != "bad-utf8" or "its first bad byte: 0xe9 at offset" in done.out, done.tail
    assert "write logs and banners to stderr" not in done.out, done.tail
