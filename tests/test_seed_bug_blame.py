"""The seed's own bug — an empty usage-only message clears the selected answer — is blamed on the
rule it breaks, SEL-003, by every test that sees it: the fold at the step that made it go wrong,
select_output when the answer is right without the empty messages, settle_run through the
adapter's own fold, and the pushed-text test, whatever buffers the fallback then shows."""

from __future__ import annotations

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

BAD = "bad_empty_message_clears_answer"


@pytest.mark.parametrize("selection", [[], ["--requirement=SEL-003"]], ids=["whole-tiers", "only-SEL-003"])
def test_the_seed_bug_is_sel_003_alone(run_suite: RunSuite, selection: list[str]) -> None:
    run = run_suite(
        "-q",
        *selection,
        "--pyargs",
        "conformance.test_selection",
        "conformance.test_results",
        impl=BAD,
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    assert run.code == 1, run.tail
    assert run.violated() == ["SEL-003"], run.tail
    failed = [t for t in run.report["tests"] if t["outcome"] == "failed"]
    assert failed and {tuple(t["blamed"]) for t in failed} == {("SEL-003",)}
    [status] = [r for r in run.report["requirements"] if r["id"] == "SEL-003"]
    assert status["status"] == "violated"
