"""--expected-failures: known gaps pass as expected, a gap that closes fails the run, and a
list that names nothing, or is malformed, is a usage error saying where."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite, SuiteRun

Run = Callable[..., SuiteRun]


@pytest.fixture
def run(tmp_path: Path, run_suite: RunSuite) -> Run:
    """The selection tier's golden vectors against ``impl``, with ``listing`` as expected.yaml."""

    def go(impl: str, listing: str, *args: str, report: bool = False) -> SuiteRun:
        (tmp_path / "expected.yaml").write_text(listing, encoding="utf-8")
        return run_suite(
            "-q", "--expected-failures=expected.yaml", "--pyargs", "conformance.test_selection", "-k", "golden_vector",
            *args, impl=impl, importable=[fixtures_dir() / "known_bad"], report=report,
        )  # fmt: skip

    return go


GAP = """expected_failures:
  - requirement: SEL-008
    reason: no streamed-text fallback yet
    link: https://tracker.invalid/42
"""


@pytest.mark.requirement("ADP-022")
def test_a_listed_gap_is_expected_and_reported(run: Run) -> None:
    done = run("bad_no_text_fallback", GAP, "--requirement=SEL-008", report=True)
    assert done.code == 0, done.tail
    assert "xfailed" in done.out.strip().splitlines()[-1]
    [sel008] = [r for r in done.report["requirements"] if r["id"] == "SEL-008"]
    assert sel008["status"] == "expected-failure"
    assert sel008["reason"] == "expected failure: no streamed-text fallback yet"


def test_a_gap_that_closed_fails_the_run(run: Run) -> None:
    done = run("reference_impl", GAP, "--requirement=SEL-008")
    assert done.code == 1, done.tail
    assert (
        "expected.yaml:2: requirement SEL-008 (https://tracker.invalid/42): its tests ran and no failure shows it"
        in done.out
    )


def test_a_listed_test_that_passes_fails_the_run(run: Run) -> None:
    vector = "test_golden_vector[chunk-later-non-empty-message-replaces-earlier]"
    listing = f"expected_failures:\n  - test: {vector}\n    reason: flaky\n"
    done = run("reference_impl", listing, "--requirement=SEL-001")
    assert done.code == 1, done.tail
    assert "[XPASS(strict)] listed as an expected failure (expected.yaml:2: flaky) but passed" in done.out


def test_an_entry_naming_nothing_here_is_reported_unused(run: Run) -> None:
    """A narrower or sharded run shares the project-wide file: what it does not reach is unused."""
    listing = GAP + "  - test: test_golden_vector[no-such-vector]\n    reason: stale\n"
    done = run("bad_no_text_fallback", listing, "--requirement=SEL-008")
    assert done.code == 0, done.tail
    assert "expected.yaml:5: test test_golden_vector[no-such-vector] names no test of this run" in done.out


def test_an_entry_naming_an_unknown_requirement_is_a_usage_error(run: Run) -> None:
    done = run("reference_impl", "expected_failures:\n  - requirement: SEL-999\n    reason: typo\n")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "expected.yaml:2: requirement SEL-999 is not in the spec" in done.err


def test_a_malformed_list_names_file_line_and_field(run: Run) -> None:
    done = run("reference_impl", "expected_failures:\n  - requirement: SEL-008\n    link: x\n")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "expected.yaml:2: expected_failures[0]: 'reason' is a required property" in done.err
