"""Every failure explains itself, in one form for every kind of test: the requirement's ID, title
and text, the operation and its input as JSON, expected and actual as JSON — in the terminal and,
field for field, in the JSON report, so that CI can triage from the report alone. (The process
tier's transcripts and stderr tails: tests/test_process_failure_output.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

KINDS = [
    # kind, known-bad adapter, its tier and the tests of one kind, the requirement it shows
    pytest.param(
        "bad_no_text_fallback", "conformance.test_selection", "golden_vector", "SEL-008", id="selection-vector"
    ),
    pytest.param(  # a stratified property: its row (nothing selected) is drawn first, so it fails every run
        "bad_empty_last_assistant_message",
        "conformance.test_results",
        "one_shot_settlement_follows_its_row",
        "RES-005",
        id="property",
    ),
    pytest.param(
        "bad_empty_last_assistant_message", "conformance.test_results", "settle_vector", "RES-005", id="settle-vector"
    ),
    pytest.param(
        "bad_dia_bound_off_by_one", "conformance.test_diagnostic", "bound_vector", "DIA-020", id="bound-vector"
    ),
    pytest.param(
        "bad_dia_exit_code_zero_dropped", "conformance.test_diagnostic", "line_vector", "DIA-006", id="line-vector"
    ),
    pytest.param("bad_dia_exit_code_zero_dropped", "conformance.test_diagnostic", "snapshot", "DIA-006", id="snapshot"),
    pytest.param(
        "bad_cdx_message_leaked", "conformance.test_recordings", "recording", "CDX-072", id="recording-replay"
    ),
]


def _one_failure(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    failed = [t for t in report["tests"] if t["outcome"] == "failed"]
    assert failed, "no test failed"
    test = failed[0]
    assert test["attribution"] == "exact", f"{test['nodeid']} fell back to blaming its markers"
    return test, test["failures"][0]


@pytest.mark.parametrize(("impl", "module", "select", "shown"), KINDS)
def test_a_failure_shows_requirement_input_expected_and_actual(
    run_suite: RunSuite, impl: str, module: str, select: str, shown: str
) -> None:
    run = run_suite(
        "-q", "--pyargs", module, "-k", select, impl=impl, importable=[fixtures_dir() / "known_bad"], report=True
    )
    assert run.code == 1, run.tail
    test, failure = _one_failure(run.report)
    req = load_spec().requirement(shown)
    assert shown in test["blamed"], test["blamed"]
    assert {"id": req.id, "level": req.level, "title": req.title, "text": " ".join(req.text.split())} in failure[
        "requirements"
    ]
    assert failure["operation"] and failure["input"] is not None and failure["expected"] != failure["actual"]
    assert failure["difference"], "no located difference"
    # The terminal says the same.
    assert f"violates {req.id} ({req.level}) {req.title}: " in run.out
    assert f"operation: {failure['operation']}" in run.out
    assert f"input: {json.dumps(failure['input'], ensure_ascii=False)[:200]}" in run.out
    assert "expected: " in run.out and "actual: " in run.out
    assert "Adapter(" not in run.out or "Adapter('" in run.out, "a fixture repr spilled into the traceback"
    assert test["message"].startswith(f"violates {shown}") or f"violates {shown}" in test["message"]
