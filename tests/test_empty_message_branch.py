"""SEL-003's fallback branch (an empty message folded while no non-empty message exists: the
fallback decides as if its content were absent) is checked by the selection properties of every
event binding in every run, not only when a draw happens to reach it (issue #28, item 6): each
property checks the fixed logs of strategies.empty_message_logs before it draws. Under the
`default` profile at seed 19 no draw of these properties reached it before those logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

BAD = "bad_any_message_beats_text"  # any message, even an empty one, beats the streamed fallback
PROPERTIES = (
    "test_select_output_follows_the_rule",
    "test_fold_after_every_prefix_is_the_rule_on_that_prefix",
    "test_pushed_text_shares_the_fallback_with_events",
)


@pytest.mark.requirement("SEL-003")
@pytest.mark.parametrize("profile", ["default", "ci"])
def test_every_event_property_catches_an_empty_message_beating_the_fallback(
    run_suite: RunSuite, tmp_path: Path, profile: str
) -> None:
    run = run_suite(
        "-q", "--pyargs", "conformance.test_selection", "-k", " or ".join(PROPERTIES), "--hypothesis-seed=19",
        impl=BAD, importable=[fixtures_dir() / "known_bad"], report=True,
        env={"SUBAGENT_CONFORMANCE_PROFILE": profile, "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hypothesis")},
    )  # fmt: skip
    failed = {t["nodeid"].split("::", 1)[1]: t["blamed"] for t in run.failed()}
    wanted = {f"{test}[{binding}]" for test in PROPERTIES for binding in ("chunk-events", "embedded-stream")}
    assert set(failed) == wanted, run.tail
    assert all(blamed[0] == "SEL-003" for blamed in failed.values()), failed
    assert run.violated() == ["SEL-003"], run.tail
