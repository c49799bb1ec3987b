"""A Job's completion notice is held to the adapter's own job_outcome, from which BGD-017 says it
is built: a wrong job_outcome detail is blamed on its own rule (BGD-004), also by the completion
golden vectors, whose failing breaks their table's BGD-019 only as a consequence (issue #28: a
"vectors hold" requirement is violated when one of its vectors fails, marked as following from
the rule); a notice that differs from its own outcome is still BGD-017's."""

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
    vectors it fails are blamed on BGD-004 as the rule, never on BGD-017, which stays unviolated;
    the tables whose vectors fail (BGD-019, and BGD-015 for the Job vectors) are violated as
    consequences of BGD-004, and the report says so."""
    run = run_suite(
        "-q", *selection, "--pyargs", "conformance.test_background",
        impl="bad_bgd_detail_colon_label", importable=_KNOWN_BAD, report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    tables = ["BGD-019"] if selection else ["BGD-015", "BGD-019"]
    assert run.violated() == ["BGD-004", *tables], run.tail
    status = {r["id"]: r for r in run.report["requirements"]}
    assert "consequence_of" not in status["BGD-004"], status["BGD-004"]
    assert {rid: status[rid].get("consequence_of") for rid in tables} == {rid: ["BGD-004"] for rid in tables}
    vectors = _failed(run.report, "test_job_notice_vector")
    assert vectors, f"no completion vector caught the wrong detail:\n{run.tail}"
    # each breaks BGD-019 too, but only BGD-004 as the rule (the report's "rules" of the test)
    blame = {(tuple(t["blamed"]), tuple(t.get("rules", ()))) for t in vectors}
    assert blame == {(("BGD-004", "BGD-019"), ("BGD-004",))}, blame
    failed = run.failed()
    assert {t["blamed"][0] for t in failed} == {"BGD-004"}
    assert {tuple(t["blamed"]) for t in failed if "::test_job_vector[" in t["nodeid"]} <= {("BGD-004", "BGD-015")}
    assert status["BGD-017"]["status"] != "violated"


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
