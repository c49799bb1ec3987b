"""The background operations follow the optional `background` claim: an adapter without a Job
runtime leaves the key out and every background requirement is not applicable to it; one that
claims a mode but lacks that mode's operation is stopped at the door, naming it (ADP-010)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import load_spec
from conformance.verdict.reach import row_params
from tests.conftest import RunSuite

_SPEC = load_spec()
_WITHOUT = 'CONFORMANCE = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": []}\n'


def _mode(row: dict[str, Any]) -> str:
    """The background mode a row's applicable_when names ("background contains job")."""
    return str(row["applicable_when"]).removeprefix("background contains ").strip()


@pytest.fixture
def write(tmp_path: Path) -> Iterator[Any]:
    names: list[str] = []

    def put(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        sys.modules.pop(name, None)
        names.append(name)

    yield put
    for name in names:
        sys.modules.pop(name, None)


@pytest.mark.requirement("ADP-008", "ADP-009")
def test_no_background_claim_is_not_applicable(write: Any, run_suite: RunSuite) -> None:
    write(
        "no_job_runtime",
        "from reference_impl import select_output, fold_output, settle_run, render_tool_result, bound_diagnostic\n"
        + _WITHOUT,
    )
    run = run_suite("--pyargs", "conformance.test_background", impl="no_job_runtime", report=True)
    assert run.code == 0, run.tail
    statuses = {r["id"]: r["status"] for r in run.report["requirements"] if r["id"].startswith("BGD-")}
    assert set(statuses.values()) == {"not-applicable"}, statuses
    assert "no_job_runtime does not claim background 'job'" in run.out, run.tail


@pytest.mark.requirement("ADP-008", "ADP-010")
@pytest.mark.parametrize(
    "row",
    row_params(_SPEC, "adapter-protocol", "operations", where=lambda r: "background" in r["claims"]),
)
def test_a_claimed_mode_requires_its_operations(row: dict[str, Any], write: Any, run_suite: RunSuite) -> None:
    others = [
        r["operation"] for r in _SPEC.table("adapter-protocol", "operations").rows if r["operation"] != row["operation"]
    ]
    source = f"from reference_impl import {', '.join(o for o in others if o.startswith(('job_', 'settlement_')))}\n"
    source += _WITHOUT.replace('"process_drivers": []', f'"process_drivers": [], "background": ["{_mode(row)}"]')
    write("lacks_one", source)
    run = run_suite("--pyargs", "conformance.test_background", "-k", "vector", impl="lacks_one")
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.tail
    assert "--impl=lacks_one: CONFORMANCE claims what needs" in run.err, run.tail
    assert f"  {row['operation']}" in run.err.splitlines(), run.tail


_ALONE = (
    "from reference_impl import job_outcome\n"
    'CONFORMANCE = {"protocol": "1", "bindings": [], "providers": {}, "process_drivers": [],'
    ' "background": ["job"], "operations": ["job_outcome"]}\n'
)
_OUTCOME_RULES = [f"BGD-00{i}" for i in range(1, 8)]


@pytest.mark.requirement("ADP-025")
def test_job_outcome_claimed_alone_is_checked_alone(write: Any, run_suite: RunSuite) -> None:
    """A Job producer without a job tool claims job_outcome alone: every job_outcome rule is
    checked, and passes for a correct one; what only job_output or job_notice shows is not
    applicable (fixtures/known_good/good_bgd_job_outcome_alone.py is the same harness)."""
    write("outcome_alone", _ALONE)
    run = run_suite("--pyargs", "conformance.test_background", impl="outcome_alone", report=True)
    assert run.code == 0, run.tail
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert {rid: statuses[rid] for rid in _OUTCOME_RULES} == dict.fromkeys(_OUTCOME_RULES, "passed"), statuses
    for rid in ("BGD-009", "BGD-015", "BGD-017", "BGD-018", "BGD-019"):  # shown only by job_output, job_notice
        assert statuses[rid] == "not-applicable", (rid, statuses[rid])


@pytest.mark.requirement("ADP-025")
def test_a_wrong_job_outcome_claimed_alone_is_violated(write: Any, run_suite: RunSuite) -> None:
    """The same harness with a wrong job_outcome (a diagnosed abort reported as a kill) is
    rejected on that rule, with no job_output to stand behind it."""
    wrong = _ALONE.replace(
        "from reference_impl import job_outcome\n",
        "import reference_impl\n"
        "def job_outcome(request):\n"
        "    result = request.get('result') or {}\n"
        "    if result.get('stopReason') == 'aborted':\n"
        "        return {'status': 'killed'}\n"
        "    return reference_impl.job_outcome(request)\n",
    )
    write("outcome_alone_wrong", wrong)
    run = run_suite("--pyargs", "conformance.test_background", impl="outcome_alone_wrong", report=True)
    assert run.code == 1, run.tail
    assert "BGD-003" in run.violated(), run.violated()
