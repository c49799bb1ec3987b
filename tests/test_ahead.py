"""The process tier's calls played ahead (conformance/process/ahead.py): they overlap, a call refused
ahead is played again alone and that run decides (tests/test_known_bad.py: every known-bad
driver is still rejected by exactly its requirements), ``--serial-process-tier`` plays nothing
ahead, and a call made in another thread is still checked against its own test's declaration."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.harness.declaration import load_adapter
from conformance.process.ahead import FAILED_AHEAD
from conformance.process.tier import call, plan_runs, product_scenarios
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict.operations import UndeclaredOperation
from tests.conftest import RunSuite

ONE_AT_A_TIME = "good_drivers_one_call_at_a_time"  # refuses a process call while another is in flight
# A few Codex calls, one of a batch that lasts at least its overlap pause (half a second): played
# ahead together, they overlap; tests/test_known_good.py runs the variant over the whole tiers.
SOME_CALLS = ["-k", "test_a_batch or test_every_mode or completed-answer", "conformance/test_codex_process.py"]


def _played_again(junit: Path) -> dict[str, str]:
    """The tests whose call failed ahead and was played again alone, with the note."""
    found = {}
    for case in ET.parse(junit).iter("testcase"):
        for prop in case.iter("property"):
            if prop.get("name") == FAILED_AHEAD:
                found[f"{case.get('classname')}::{case.get('name')}"] = str(prop.get("value"))
    return found


def _some_calls() -> list[str]:
    root = Path(__file__).resolve().parent.parent
    return [*SOME_CALLS[:-1], str(root / SOME_CALLS[-1])]


def test_calls_refused_ahead_are_played_again_alone(run_suite: RunSuite, tmp_path: Path) -> None:
    """An adapter serving one process call at a time (correct: the contract overlaps the runs of
    one call, not calls) passes; that it refused a call shows the calls ahead overlapped."""
    junit = tmp_path / "ahead.xml"
    run = run_suite(
        "-q", f"--junitxml={junit}", *_some_calls(), impl=ONE_AT_A_TIME, importable=[fixtures_dir() / "known_good"]
    )
    assert run.code == 0, run.tail
    again = _played_again(junit)
    assert again, "no call was refused ahead: the calls played ahead did not overlap"
    assert all("OperationError" in note for note in again.values()), again


def test_serial_process_tier_plays_nothing_ahead(run_suite: RunSuite, tmp_path: Path) -> None:
    junit = tmp_path / "serial.xml"
    run = run_suite(
        "-q", "--serial-process-tier", f"--junitxml={junit}", *_some_calls(),
        impl=ONE_AT_A_TIME, importable=[fixtures_dir() / "known_good"],
    )  # fmt: skip
    assert run.code == 0, run.tail
    assert _played_again(junit) == {}


def test_a_process_call_in_its_own_thread_is_checked_against_its_tests_declaration(tmp_path: Path) -> None:
    spec = load_spec()
    adapter = load_adapter("reference_impl", spec)
    [scenario] = [s for s in product_scenarios(spec, "codex") if s.name == "completed-answer"]
    adapter.declared = (frozenset({"fold_output"}), "conformance.test_example")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UndeclaredOperation)
            with pytest.raises(UndeclaredOperation, match="calls operation 'run_codex'"):
                call(adapter, plan_runs(spec, scenario, tmp_path))
    finally:
        adapter.declared = None
