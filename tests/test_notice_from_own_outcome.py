"""A Job's completion notice is held to the adapter's own job_outcome, from which BGD-017 says it
is built: a wrong job_outcome detail is blamed once, on its own rule (BGD-004), also by the
completion golden vectors, while a notice that differs from its own outcome is still BGD-017's."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

_KNOWN_BAD = [fixtures_dir() / "known_bad"]


def _failed(report: dict[str, Any], test: str) -> list[dict[str, Any]]:
    return [t for t in report["tests"] if t["outcome"] == "failed" and f"::{test}[" in t["nodeid"]]


@pytest.mark.parametrize("selection", [[], ["--requirement=BGD-019"]], ids=["whole-tier", "only-BGD-019"])
def test_a_wrong_detail_is_blamed_on_bgd_004_by_the_notice_vectors_too(
    run_suite: RunSuite, selection: list[str]
) -> None:
    """bad_bgd_detail_colon_label builds its notice from its own (wrong) outcome: the completion
    vectors it fails are blamed on BGD-004, never on BGD-017, which stays unviolated."""
    run = run_suite(
        "-q", *selection, "--pyargs", "conformance.test_background",
        impl="bad_bgd_detail_colon_label", importable=_KNOWN_BAD, report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    # the Job golden vectors it fails also break BGD-015 (the Job golden vectors hold), never BGD-019
    assert run.violated() == (["BGD-004"] if selection else ["BGD-004", "BGD-015"]), run.tail
    vectors = _failed(run.report, "test_job_notice_vector")
    assert vectors, f"no completion vector caught the wrong detail:\n{run.tail}"
    assert {tuple(t["blamed"]) for t in vectors} == {("BGD-004",)}
    failed = run.failed()
    assert {t["blamed"][0] for t in failed} == {"BGD-004"}
    assert {tuple(t["blamed"]) for t in failed if "::test_job_vector[" in t["nodeid"]} <= {("BGD-004", "BGD-015")}
    [notice] = [r for r in run.report["requirements"] if r["id"] == "BGD-017"]
    assert notice["status"] != "violated"


def test_a_notice_that_drops_its_own_detail_is_still_bgd_017(run_suite: RunSuite) -> None:
    """The other side: a notice that leaves out the detail its own (right) outcome has is blamed
    on BGD-017 by the completion vectors, as before."""
    run = run_suite(
        "-q", "--requirement=BGD-019", "--pyargs", "conformance.test_background",
        impl="bad_bgd_notice_without_detail", importable=_KNOWN_BAD, report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    vectors = _failed(run.report, "test_job_notice_vector")
    assert vectors, run.tail
    # the notice is the answer these vectors state: they also break BGD-019 (the completion vectors hold)
    assert {tuple(t["blamed"]) for t in vectors} == {("BGD-017", "BGD-019")}
