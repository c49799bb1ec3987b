"""A missing recording is a gap in the suite's data, not the adapter's fault (ADP-022, issue #31):
a run that needs the recording of the claimed release's range and finds none (or finds one of
another release) reports the gap, naming the file and the command that records it, blames no
requirement, never reads `passed` for what the case checks, and does not conform. The run reads
a copy of the recordings with one of them missing or stale."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.spec import load_spec, schema_validator
from conformance.spec.resources import fixtures_dir, shown_data_path
from tests.conftest import RunSuite

CASE = "http-401"  # covers CDX-075, CDX-002, CDX-004; the reference claims codex 0.147.0, recorded at 0.147.0


def _missing(folder: Path) -> None:
    (folder / "codex" / "0.147.0" / f"{CASE}.json").unlink()


def _stale(folder: Path) -> None:
    file = folder / "codex" / "0.147.0" / f"{CASE}.json"
    file.write_text(file.read_text(encoding="utf-8").replace('"version": "0.147.0"', '"version": "0.150.1"'), "utf-8")


@pytest.mark.requirement("ADP-022")
@pytest.mark.parametrize(
    ("damage", "said"),
    [(_missing, "has no recording of codex 0.147.0"), (_stale, "records @openai/codex@0.150.1")],
    ids=["missing", "stale"],
)
def test_a_recording_the_suite_lacks_is_a_gap_of_the_suite_never_the_adapters(
    tmp_path: Path, run_suite: RunSuite, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], None], said: str
) -> None:
    folder = tmp_path / "recordings"
    shutil.copytree(fixtures_dir() / "recordings", folder)
    damage(folder)
    monkeypatch.setattr("conformance.products.recordings.recordings_dir", lambda: folder)
    summary = tmp_path / "summary.md"
    run = run_suite(
        "-q", "--pyargs", "conformance.test_recordings", f"--conformance-summary={summary}",
        impl="reference_impl", report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    schema_validator(load_spec().root, "report").validate(run.report)
    assert run.report["run"]["verdict"] == "incomplete" and not run.violated(), run.tail
    [test] = [t for t in run.report["tests"] if t["nodeid"].endswith(f"[codex-{CASE}]")]
    command = "subagent-conformance products record --product codex --version 0.147.0"
    assert test["outcome"] == "error" and test.get("blamed", []) == [], test
    assert said in test["data_gap"] and command in test["data_gap"] and test["message"] == test["data_gap"]
    if damage is _missing:
        assert str(folder / "codex" / "0.147.0" / f"{CASE}.json") in test["data_gap"]
    statuses = {r["id"]: r for r in run.report["requirements"]}
    for rid in ("CDX-075", "CDX-002", "CDX-004"):  # what the case checks: also checked by passing cases, never passed
        assert statuses[rid]["status"] == "not-testable", statuses[rid]
        assert statuses[rid]["reason"].startswith("the suite's data has a gap: ") and said in statuses[rid]["reason"]
    others = [t for t in run.report["tests"] if t is not test]
    assert others and all(t["outcome"] in ("passed", "not-applicable") for t in others), json.dumps(others)[:2000]
    assert said in run.output and command in run.output
    shown = summary.read_text(encoding="utf-8")
    assert "**run failed**" in shown.splitlines()[0] and said in shown, shown[:3000]  # incomplete, not violated


def test_a_gap_names_a_shipped_file_as_the_suite_ships_it_not_by_this_machines_path(tmp_path: Path) -> None:
    """The report reads the same on any machine: a recording the suite ships is named
    `fixtures/recordings/…` (a wheel's _data or a checkout alike); data elsewhere as given."""
    shipped = fixtures_dir() / "recordings" / "codex" / "0.147.0" / f"{CASE}.json"
    assert shown_data_path(shipped) == f"fixtures/recordings/codex/0.147.0/{CASE}.json"
    assert shown_data_path(tmp_path / "x.json") == str(tmp_path / "x.json")
