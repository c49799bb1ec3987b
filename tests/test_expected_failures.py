"""--expected-failures: known gaps pass as expected, a gap that closes fails the run, and a
list that names nothing, or is malformed, is a usage error saying where."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.resources import fixtures_dir


def run(tmp_path: Path, impl: str, listing: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "expected.yaml").write_text(listing, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(fixtures_dir() / "known_bad"), "SUBAGENT_CONFORMANCE_PROFILE": "selftest"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", f"--impl={impl}",
         "--expected-failures=expected.yaml", "--pyargs", "conformance.test_selection", "-k", "golden_vector", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


GAP = """expected_failures:
  - requirement: SEL-008
    reason: no streamed-text fallback yet
    link: https://tracker.invalid/42
"""


@pytest.mark.requirement("ADP-022")
def test_a_listed_gap_is_expected_and_reported(tmp_path: Path) -> None:
    done = run(tmp_path, "bad_no_text_fallback", GAP, "--requirement=SEL-008", "--conformance-report=report.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "xfailed" in done.stdout.strip().splitlines()[-1]
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    [sel008] = [r for r in report["requirements"] if r["id"] == "SEL-008"]
    assert sel008["status"] == "violated" and sel008["reason"] == "expected failure: no streamed-text fallback yet"


def test_a_gap_that_closed_fails_the_run(tmp_path: Path) -> None:
    done = run(tmp_path, "reference_impl", GAP, "--requirement=SEL-008")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "XPASS(strict)" in done.stdout


def test_an_entry_naming_nothing_is_a_usage_error(tmp_path: Path) -> None:
    listing = GAP + "  - test: test_golden_vector[no-such-vector]\n    reason: stale\n"
    done = run(tmp_path, "bad_no_text_fallback", listing, "--requirement=SEL-008")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "expected.yaml:5: test test_golden_vector[no-such-vector] names no test of this run" in done.stderr


def test_a_malformed_list_names_file_line_and_field(tmp_path: Path) -> None:
    done = run(tmp_path, "reference_impl", "expected_failures:\n  - requirement: SEL-008\n    link: x\n")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "expected.yaml:2: expected_failures[0]: 'reason' is a required property" in done.stderr
