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


# A failing golden vector is blamed on its rule and on SEL-027 (the golden vectors hold); the
# rule's entry covers both, SEL-027 being broken only because SEL-008 is.
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
    # the golden vectors that show the gap break SEL-027 only because SEL-008 broke: its entry covers them
    [sel027] = [r for r in done.report["requirements"] if r["id"] == "SEL-027"]
    assert sel027["status"] == "expected-failure", sel027


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


@pytest.mark.requirement("ADP-022")
def test_tests_are_named_as_a_user_writes_them(tmp_path: Path, run_suite: RunSuite) -> None:
    """A ``test:`` entry names a module relative to the installed package, to the folder holding it,
    or by another installation's absolute path, or no module at all; with the parameters of one
    case or without them, for every case. Each failure of a first run is listed in one of these
    forms: the second run passes with all of them expected, and only the entries that name nothing
    of the run (a module it did not run, a test that does not exist) are reported unused."""
    args = ("-q", "--requirement=SEL-008", "--pyargs", "conformance.test_selection")
    first = run_suite(*args, impl="bad_no_text_fallback", importable=[fixtures_dir() / "known_bad"], report=True)
    assert first.code == 1, first.tail
    outcomes = {t["nodeid"]: t["outcome"] for t in first.report["tests"]}
    # run from outside the rootdir, the node ids name the module relative to the package's folder
    assert all(nodeid.startswith("conformance/test_selection.py::") for nodeid in outcomes), list(outcomes)[:3]

    def test_of(nodeid: str) -> str:
        return nodeid.split("::", 1)[1].partition("[")[0]

    failing = [n for n, outcome in outcomes.items() if outcome == "failed"]
    every_case = [
        t
        for t in dict.fromkeys(map(test_of, failing))
        if all(outcomes[m] == "failed" for m in outcomes if test_of(m) == t)
    ]
    whole = every_case[:1]  # one test listed without parameters; the others case by case
    cases = [n.split("::", 1)[1] for n in failing if test_of(n) not in whole]
    assert whole and len(cases) >= 4, "the run shows a test failing in every case, and other failures"
    forms = [
        "conformance/test_selection.py::{}",
        "test_selection.py::{}",
        "{}",
        "/elsewhere/venv/lib/python3.11/site-packages/conformance/test_selection.py::{}",
    ]
    written = [forms[0].format(whole[0])]
    written += [forms[i % len(forms)].format(case) for i, case in enumerate(cases)]
    nothing = [f"test_results.py::{cases[0]}", "test_selection.py::test_no_such_test"]
    listing = tmp_path / "gaps.yaml"
    listing.write_text(
        "expected_failures:\n" + "".join(f"  - test: '{name}'\n    reason: known\n" for name in written + nothing),
        encoding="utf-8",
    )

    second = run_suite(*args, f"--expected-failures={listing}", impl="bad_no_text_fallback",
                       importable=[fixtures_dir() / "known_bad"], report=True)  # fmt: skip
    assert second.code == 0, second.tail
    again = {t["nodeid"]: t["outcome"] for t in second.report["tests"]}
    assert {n for n, outcome in again.items() if outcome == "expected-failure"} == set(failing)
    unused = second.report["run"]["unused_expected_failures"]
    assert [line.split(": test ", 1)[1] for line in unused] == [f"{name} names no test of this run" for name in nothing]
