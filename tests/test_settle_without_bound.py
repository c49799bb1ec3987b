"""The out-of-process settlement rows bound an expected diagnostic with the contract's bound
(DIA-019, DIA-020, computed by the suite), not with the adapter's bound_diagnostic: a harness
that settles runs but does not implement bound_diagnostic has RES-015 and RES-017 checked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import RunSuite

_SOURCE = (
    "from reference_impl import fold_output, settle_run\n"
    'CONFORMANCE = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": [],'
    ' "operations": ["fold_output", "settle_run"]}\n'
)


@pytest.mark.requirement("ADP-025", "ADP-026")
def test_settlement_rows_run_without_bound_diagnostic(tmp_path: Path, run_suite: RunSuite) -> None:
    (tmp_path / "settles_without_bound.py").write_text(_SOURCE, encoding="utf-8")
    sys.modules.pop("settles_without_bound", None)
    try:
        run = run_suite(
            "--pyargs", "conformance.test_results", impl="settles_without_bound", importable=[tmp_path], report=True
        )
    finally:
        sys.modules.pop("settles_without_bound", None)
    assert run.code == 0, run.tail
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert (statuses["RES-015"], statuses["RES-017"]) == ("passed", "passed"), statuses
