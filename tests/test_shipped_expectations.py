"""Shipped expectations cannot be rewritten: syrupy's rewriting options are refused when the
suite runs (a known-bad adapter stays rejected), an edited snapshot file is found, and
``products record`` never writes into an installed suite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.areas.diagnostic.snapshots import SNAPSHOT_FILE, snapshot_problems
from conformance.cli import main
from conformance.spec import load_spec, resources
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

BAD = "bad_dia_exit_code_zero_dropped"  # its exit-code-0 texts differ from the snapshots
SNAPSHOT_TESTS = ("--pyargs", "conformance.test_diagnostic", "-k", "snapshot")


@pytest.mark.requirement("ADP-024", "DIA-015", "DIA-016")
@pytest.mark.parametrize("option", ["--snapshot-update", "--snapshot-update-new-only", "--snapshot-dirname=elsewhere"])
def test_snapshot_update_with_a_known_bad_adapter_leaves_the_snapshots_and_the_verdict(
    run_suite: RunSuite, option: str
) -> None:
    before = SNAPSHOT_FILE.read_bytes()
    known_bad = [fixtures_dir() / "known_bad"]
    refused = run_suite("-q", option, *SNAPSHOT_TESTS, impl=BAD, importable=known_bad)
    assert refused.code == pytest.ExitCode.USAGE_ERROR, refused.tail
    assert f"{option.split('=')[0]}: the conformance suite's snapshots are the spec's expectations" in refused.err
    assert SNAPSHOT_FILE.read_bytes() == before, "the shipped snapshots must be byte-identical"
    again = run_suite("-q", *SNAPSHOT_TESTS, impl=BAD, importable=known_bad)
    assert again.code == pytest.ExitCode.TESTS_FAILED, again.tail
    assert SNAPSHOT_FILE.read_bytes() == before


@pytest.mark.requirement("ADP-023", "ADP-024")
def test_snapshot_options_of_a_users_own_run_are_left_alone(run_suite: RunSuite) -> None:
    """Only the suite's snapshots are guarded: a run without its tests never sees the refusal."""
    done = run_suite("--snapshot-update", "--pyargs", "conformance.test_spec", "-k", "no_such_test_here")
    assert "snapshots are the spec's expectations" not in done.err, done.tail


@pytest.mark.requirement("ADP-024", "DIA-015", "DIA-016")
def test_an_edited_snapshot_file_differs_from_the_spec(tmp_path: Path) -> None:
    spec = load_spec()
    assert snapshot_problems(spec) == [], "the shipped snapshots say what the spec renders"
    edited = tmp_path / "test_diagnostic.ambr"
    shutil.copyfile(SNAPSHOT_FILE, edited)
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("; exit code: 0)", ")", 1), encoding="utf-8")
    problems = snapshot_problems(spec, edited)
    assert len(problems) == 1 and ": differs from the spec's rendering" in problems[0], problems


@pytest.mark.requirement("ADP-024")
def test_products_record_refuses_to_write_into_an_installed_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "site-packages" / "conformance"
    (package / "_data" / "fixtures" / "recordings").mkdir(parents=True)
    monkeypatch.setattr(resources, "PACKAGE", package)  # as from a wheel: the data under _data
    for args in ([], ["--output", str(package / "_data" / "fixtures" / "recordings")]):
        assert main(["products", "record", *args]) == 2
        err = capsys.readouterr().err
        assert "is inside the installed suite, whose recordings are shipped expectations" in err, err
        assert "pass --output DIR to record elsewhere" in err
    assert list((package / "_data" / "fixtures" / "recordings").iterdir()) == []


def test_listing_the_suite_succeeds_and_leaves_the_snapshots(run_suite: RunSuite) -> None:
    """--collect-only runs no test, so no shipped snapshot is unused: syrupy's unused-snapshot
    failure (and its advice to use the refused --snapshot-update) would be a false alarm."""
    before = SNAPSHOT_FILE.read_bytes()
    listed = run_suite("--collect-only", "-q", "--pyargs", "conformance.test_diagnostic")
    assert listed.code == 0, listed.tail
    assert "--snapshot-update" not in listed.output, listed.tail
    assert SNAPSHOT_FILE.read_bytes() == before
