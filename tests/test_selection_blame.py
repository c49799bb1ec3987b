"""Each selection bug is blamed on the rule that tells expected from actual, the same way in every
test that sees it (issue #23): ``[]`` for "nothing selected" from select_output alone is SEL-013
also where select_output is compared with the fold (SEL-024 speaks only of what exists); a harness
that claims ``embedded-stream`` but reads only ``assistant/chunk`` breaks the binding's reading
rule SEL-016, not SEL-008; text streamed after a message that displaces it is SEL-004's; and the
pushed-text test blames SEL-022 only for a fold that keeps the pushed text apart, deferring to
the rule that broke for every other bug. A failing golden vector also breaks its table's
"golden vectors hold" requirement (SEL-027, RES-018), which a run may add to the rule."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.areas.selection.blame import check_selected
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict.blame import Violation
from tests.conftest import RunSuite, SuiteRun

# The requirements the golden vector tables of the two tiers hold (a failing vector breaks them).
HOLDS = {
    rid
    for area, table in [("selection", "golden_vectors"), ("results", "settle_vectors")]
    for rid in load_spec().table(area, table).requirements
}
PUSHED = "test_pushed_text_shares_the_fallback_with_events"


def _run(run_suite: RunSuite, module: str) -> SuiteRun:
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_selection",
        "conformance.test_results",
        impl=module,
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    assert run.code == 1, run.tail
    return run


def _failed(run: SuiteRun) -> list[dict[str, Any]]:
    return run.failed()


@pytest.mark.parametrize(
    ("module", "rules"),
    [
        ("bad_select_nothing_is_empty_list", {"SEL-013"}),
        ("bad_embedded_reads_chunks", {"SEL-016", "SEL-017"}),
        ("bad_late_text_displaces_message", {"SEL-004"}),
        ("bad_pushed_text_apart", {"SEL-022"}),
    ],
)
def test_each_bug_is_blamed_on_its_rule_in_every_test(run_suite: RunSuite, module: str, rules: set[str]) -> None:
    run = _run(run_suite, module)
    violated = set(run.violated())
    assert violated - HOLDS == rules, run.tail
    failed = _failed(run)
    assert failed
    for test in failed:  # every failing test: the rule, plus its vector table's requirement for a vector
        assert set(test["blamed"]) - HOLDS <= rules and set(test["blamed"]) & rules, test["nodeid"]
        assert bool(set(test["blamed"]) & HOLDS) == ("_vector[" in test["nodeid"]), test["nodeid"]
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert all(statuses[rid] == "violated" for rid in rules)


def test_empty_list_for_nothing_is_sel_013_also_against_the_fold(run_suite: RunSuite) -> None:
    run = _run(run_suite, "bad_select_nothing_is_empty_list")
    equal = [t for t in _failed(run) if "test_select_output_equals_the_folds_last_value" in t["nodeid"]]
    assert equal, "select_output differs from the fold: the test comparing them must fail"
    assert {tuple(t["blamed"]) for t in equal} == {("SEL-013",)}
    assert "SEL-024" not in run.violated()


@pytest.mark.parametrize("binding", ["chunk-events", "embedded-stream"])
def test_an_empty_event_list_is_explained_by_what_exists(binding: str) -> None:
    """No events: ``[]`` is SEL-013's (nothing is null), a text block SEL-024's (an empty list
    gives null); neither explanation speaks of fold values, which an empty list has none of."""
    spec = load_spec()
    for actual, rule in [([], "SEL-013"), ([{"type": "text", "text": "x"}], "SEL-024")]:
        with pytest.raises(Violation) as caught:
            check_selected(spec, binding, [], actual)
        assert caught.value.requirements == (rule,)
        assert "fold" not in caught.value.detail


def test_embedded_misread_is_not_a_missing_fallback(run_suite: RunSuite) -> None:
    """The same harness selects streamed text in chunk-events and text-stream folds: its fallback
    exists, so the missing text of a new-format log is the binding's misread (SEL-016)."""
    run = _run(run_suite, "bad_embedded_reads_chunks")
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert statuses["SEL-016"] == "violated" and statuses["SEL-008"] == "passed"


@pytest.mark.parametrize(
    ("module", "rule"),
    [
        ("bad_empty_message_clears_answer", "SEL-003"),
        ("bad_embedded_reads_chunks", "SEL-016"),
        ("bad_late_text_displaces_message", "SEL-004"),
        ("bad_no_text_fallback", "SEL-008"),
        ("bad_pushed_text_apart", "SEL-022"),
    ],
)
def test_pushed_text_test_defers_to_the_rule_that_broke(run_suite: RunSuite, module: str, rule: str) -> None:
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_selection",
        "-k",
        PUSHED,
        impl=module,
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    failed = _failed(run)
    assert failed, f"{module}: the pushed-text test must catch it\n{run.tail}"
    assert {tuple(t["blamed"]) for t in failed} == {(rule,)}, run.tail
