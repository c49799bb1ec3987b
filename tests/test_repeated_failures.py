"""A failure costs one call, not a run: a pure operation that hung is not called again, and
one that fails the same way again ends its test at once instead of being shrunk over (with
the first example and the count); the adapter's own frames are all kept, and a shape error
leads with what was expected.

Counted, never timed: each adapter writes a line to a file whenever an operation is entered,
and the nested runs use the ``ci`` profile, in which Hypothesis shrinks (``selftest`` does not).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.adapter import AdapterResponseError, OperationError
from conformance.harness.declaration import load_adapter
from conformance.harness.repeats import RepeatedFailure
from conformance.spec import load_spec
from tests.conftest import RunSuite, SuiteRun

SELECTION = ("--pyargs", "conformance.test_selection")
SHRINKING = {"SUBAGENT_CONFORMANCE_PROFILE": "ci"}

# select_output hangs when $HANG is set; every entry is counted, with the test it was made in.
HANGS = """
import os, threading
import reference_impl
from reference_impl import *
CONFORMANCE = reference_impl.CONFORMANCE


def select_output(request):
    with open(os.environ["ENTERED"], "a") as entered:
        entered.write(os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] + "\\n")
    if os.environ.get("HANG"):
        threading.Event().wait(60)  # long past any deadline of the run
    return reference_impl.select_output(request)
"""

# select_output fails five frames down its own call chain.
RAISES = """
import os
import reference_impl
from reference_impl import *
CONFORMANCE = reference_impl.CONFORMANCE


def select_output(request):
    with open(os.environ["ENTERED"], "a") as entered:
        entered.write("select_output\\n")
    return first(request["events"])


def first(events):
    return second(events)


def second(events):
    return third(events)


def third(events):
    return fourth(events)


def fourth(events):
    raise LookupError(f"no answer among {len(events)} events")
"""
RECURSES = (
    RAISES + '\n\ndef fold_output(request):\n    return deeper(len(request["steps"]))\n\n\n'
    "def deeper(depth):\n    return deeper(depth + 1)  # a RecursionError: a thousand frames of the adapter's own\n"
)


CHAIN = [  # each own frame of the raise, innermost first: the function and the line it is at
    ("fourth", "raise LookupError"),
    ("third", "return fourth(events)"),
    ("second", "return third(events)"),
    ("first", "return second(events)"),
    ("select_output", "return first(request"),
]


def _line(source: str, text: str) -> int:
    """The line of ``source`` holding ``text``, as a traceback counts it."""
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _adapter(tmp_path: Path, name: str, source: str) -> str:
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    sys.modules.pop(name, None)
    return name


def _entered(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _test_name(nodeid: str) -> str:
    """The test and its parameters, whatever form the node id's path has."""
    return nodeid.split("::", 1)[1]


def _failed(done: SuiteRun) -> dict[str, dict[str, Any]]:
    return {_test_name(t["nodeid"]): t for t in done.failed()}


@pytest.mark.requirement("ADP-018")
def test_a_hung_python_operation_is_entered_once_and_fails_exactly_its_tests_on_adp_018(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    entered = tmp_path / "entered"
    impl = _adapter(tmp_path, "hangs_select", HANGS)
    calling = run_suite("-q", *SELECTION, impl=impl, env={"ENTERED": str(entered)})
    assert calling.code == pytest.ExitCode.OK, calling.tail
    callers = {_test_name(line) for line in _entered(entered)}  # the tests that call select_output
    entered.unlink()
    sys.modules.pop(impl, None)

    done = run_suite(
        "-q", "--call-timeout=0.3", *SELECTION, impl=impl, report=True,
        env={**SHRINKING, "ENTERED": str(entered), "HANG": "1"},
    )  # fmt: skip
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert len(_entered(entered)) == 1, "select_output was called again after it hung"
    failed = _failed(done)
    assert set(failed) == callers and len(callers) > 10, (sorted(failed), sorted(callers))
    assert {(tuple(t["blamed"]), t["attribution"]) for t in failed.values()} == {(("ADP-018",), "exact")}
    first = _test_name(_entered(entered)[0])
    assert f"in {first}" in done.out or "did not return within 0.3 s" in failed[first]["message"], done.tail
    refused = [t["message"] for t in failed.values() if "select_output not called: it hung earlier" in t["message"]]
    assert len(refused) >= len(callers) - 1, done.tail  # all but perhaps the first, which may fail on the hang
    assert f"{len(refused)} call(s) of it not made so far" in done.out, done.tail


@pytest.mark.requirement("ADP-013")
def test_an_always_raising_operation_costs_a_call_per_test_and_keeps_its_own_frames(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    entered = tmp_path / "entered"
    done = run_suite(
        "-q", *SELECTION, "-k", "select_output", impl=_adapter(tmp_path, "raises_select", RAISES), report=True,
        env={**SHRINKING, "ENTERED": str(entered)},
    )  # fmt: skip
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = _failed(done)
    assert failed and {tuple(t["blamed"]) for t in failed.values()} == {("ADP-013",)}, done.tail
    # The first failing test may try one shrunk example before it ends; every other test, one call.
    assert len(_entered(entered)) <= len(failed) + 1, (len(_entered(entered)), len(failed))
    own = [f"raises_select.py:{_line(RAISES, call)} in {name}" for name, call in CHAIN]  # innermost first
    assert f"/raises_select.py:{own[0].split(':', 1)[1]}; called from {', '.join(own[1:])})" in done.out, done.tail
    # Each later test ends at its first call: the same failure again, or (an input that failed
    # before, which by ADP-014 would fail again) not called at all.
    same = ("the same failure as on its first example, in ", "not called: the same input failed earlier in this run")
    again = [t["message"] for t in failed.values() if any(s in t["message"] for s in same)]
    assert len(again) >= len(failed) - 1 and "call(s) of select_output failed this way so far" in done.out


@pytest.mark.requirement("ADP-013")
def test_recursion_in_the_adapter_is_folded_not_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ENTERED", str(tmp_path / "entered"))
    adapter = load_adapter(_adapter(tmp_path, "recurses", RECURSES), load_spec())
    with pytest.raises(OperationError) as caught:
        adapter.call("fold_output", {"binding": "text-stream", "steps": [{"text": "a"}]})
    message = str(caught.value)
    assert message.startswith("fold_output raised RecursionError: "), message
    deeper, fold = _line(RECURSES, "return deeper(depth + 1)"), _line(RECURSES, "return deeper(len(")
    assert f"; called from recurses.py:{deeper} in deeper ×" in message, message
    assert message.endswith(f", recurses.py:{fold} in fold_output)"), message
    assert len(message) < 1000, message
    # The same exception raised the same way again ends the test at once, with the first example.
    with pytest.raises(RepeatedFailure) as again:
        adapter.call("fold_output", {"binding": "text-stream", "steps": [{"text": "b"}]})
    assert again.value.requirements == ("ADP-013",)
    message = str(again.value)
    assert "the same failure as on its first example, in tests/test_repeated_failures.py::test_recursion" in message
    assert 'on input {"binding": "text-stream", "steps": [{"text": "a"}]}; 2 call(s) of fold_output' in message
    sys.modules.pop("recurses", None)


WRONG_SHAPE = """
import reference_impl
from reference_impl import *
CONFORMANCE = reference_impl.CONFORMANCE


def fold_output(request):
    return {"values": ["x" * 100] * 25}  # an object where an array belongs, 2,500 characters of it
"""


@pytest.mark.requirement("ADP-012")
@pytest.mark.reaches("adapter-protocol.exec_limits", 6)
def test_a_wrong_shaped_answer_leads_with_what_was_expected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    adapter = load_adapter(_adapter(tmp_path, "wrong_shape", WRONG_SHAPE), load_spec())
    with pytest.raises(AdapterResponseError) as caught:
        adapter.call("fold_output", {"binding": "text-stream", "steps": [{"text": "a"}]})
    message = str(caught.value)
    expected = (
        "fold_output returned an invalid response: expected an array: the value is an object at (the whole value)"
    )
    assert message.startswith(expected + '; offending value: {"values": ["xxx'), message
    shown = next(row["value"] for row in load_spec().table("adapter-protocol", "exec_limits").rows
                 if row["name"] == "shown_value_max")  # fmt: skip
    assert len(message) < len(expected) + shown + 100 and "characters in all)" in message, message
    sys.modules.pop("wrong_shape", None)
