"""The seed's own bug — an empty usage-only message clears the selected answer — is blamed on the
rule it breaks, SEL-003, by every test that sees it: the fold at the step that made it go wrong,
select_output when the answer is right without the empty messages, settle_run through the
adapter's own fold, and the pushed-text test, whatever buffers the fallback then shows. The golden
vectors that show it also break "the golden vectors hold" (SEL-027, RES-018)."""

from __future__ import annotations

import pytest

from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict.summary import markdown_summary
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
    # SEL-003 is the one rule; the golden vectors that show the bug also break their table's
    # "golden vectors hold" requirement (SEL-027, RES-018), and nothing else.
    spec = load_spec()
    holds = {
        *spec.table("selection", "golden_vectors").requirements,
        *spec.table("results", "settle_vectors").requirements,
    }
    assert set(run.violated()) - holds == {"SEL-003"} and "SEL-027" in run.violated(), run.tail
    failed = run.failed()
    assert failed and {t["blamed"][0] for t in failed} == {"SEL-003"}
    assert all(set(t["blamed"][1:]) <= holds for t in failed)
    entries = {r["id"]: r for r in run.report["requirements"]}
    assert entries["SEL-003"]["status"] == "violated" and "consequence_of" not in entries["SEL-003"]
    # The report and the summary mark the vector tables' "hold" requirements as following from SEL-003.
    consequences = {rid: r["consequence_of"] for rid, r in entries.items() if "consequence_of" in r}
    assert consequences == {rid: ["SEL-003"] for rid in set(run.violated()) - {"SEL-003"}}, consequences
    assert {"SEL-027", *(["RES-018"] if not selection else [])} <= set(consequences), consequences
    summary = markdown_summary(run.report, docs="docs")
    [row] = [line for line in summary.splitlines() if line.startswith("| [SEL-027]")]
    assert "follows from [SEL-003]" in row, row
    [row] = [line for line in summary.splitlines() if line.startswith("| [SEL-003]")]
    assert "follows from" not in row, row
