"""The JSON report is strict JSON whatever the adapter answered: NaN, Infinity, -Infinity and
lone surrogates in an answer reach the report's ``actual`` in a documented form (ADP-022), never
as tokens only Python's json reads back."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.verdict.report import NON_JSON_NUMBER, strict_json
from tests.conftest import RunSuite

FAULTS = Path(__file__).resolve().parents[1] / "fixtures" / "faults"
SELECTION = ("--pyargs", "conformance.test_selection", "-k", "test_golden_vector")


def _refuse(token: str) -> Any:
    raise ValueError(f"not strict JSON: {token}")


def _strict(text: str) -> Any:
    """The file read as jq or JSON.parse would: no NaN or Infinity token, and (I-JSON) no string
    that holds a lone surrogate once read."""
    data = json.loads(text, parse_constant=_refuse)
    for value in _values(data):
        if isinstance(value, str):
            assert not re.search("[\ud800-\udfff]", value), value
    return data


def _values(value: Any) -> list[Any]:
    """Every scalar of a JSON value, and every key."""
    if isinstance(value, dict):
        return [*value, *(v for item in value.values() for v in _values(item))]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [value]


@pytest.mark.requirement("ADP-022")
@pytest.mark.parametrize("form", ["python", "exec"])
def test_non_json_numbers_and_lone_surrogates_reach_a_strict_report(
    tmp_path: Path, run_suite: RunSuite, form: str
) -> None:
    module = FAULTS / "fault_non_json_values.py"
    impl = "fault_non_json_values" if form == "python" else f"exec:{sys.executable} {module}"
    report = tmp_path / "strict.json"
    done = run_suite("-q", *SELECTION, f"--conformance-report={report}", impl=impl, importable=[FAULTS])
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    text = report.read_text(encoding="utf-8")
    data = _strict(text)
    failed = [t for t in data["tests"] if t["outcome"] == "failed"]
    assert failed, done.tail
    scores = [
        block["score"]
        for t in failed
        for f in t.get("failures", [])
        if isinstance(f["actual"], list)
        for block in f["actual"]
        if isinstance(block, dict) and "score" in block
    ]
    assert scores, failed[0]
    assert scores[0] == {
        "nan": {NON_JSON_NUMBER: "NaN"},
        "inf": {NON_JSON_NUMBER: "Infinity"},
        "-inf": {NON_JSON_NUMBER: "-Infinity"},
        "lone": "cut \\ud83d pair",  # the escape's six characters, as the terminal shows them
    }
    assert all(t["blamed"] and not set(t["blamed"]) & {"ADP-012", "ADP-013"} for t in failed), failed[0]


@pytest.mark.requirement("ADP-022")
def test_strict_json_marks_what_json_cannot_write() -> None:
    value = {"a\udc00": [float("nan"), float("inf"), -float("inf"), 1.5, "x\ud83d", None, True]}
    assert strict_json(value) == {
        "a\\udc00": [
            {NON_JSON_NUMBER: "NaN"},
            {NON_JSON_NUMBER: "Infinity"},
            {NON_JSON_NUMBER: "-Infinity"},
            1.5,
            "x\\ud83d",
            None,
            True,
        ]
    }
    json.dumps(strict_json(value), allow_nan=False).encode("utf-8")  # neither raises
