"""Three product bugs of issue #23 are blamed on the rule that tells expected from actual, by
every test of their tiers that sees them:

- an object variant whose detail carries an undeclared key, read as unknown: CDX-005 alone (the
  rule that unread detail keys change nothing), not CDX-003, and by a stratified property too,
  not only by the golden vectors;
- a published Claude Code run whose CLI died before any message, reported as a start-up failure:
  CC-035 alone, from the pure claude_code_outcome and from the bypass-as-root replay, without
  process drivers;
- a leak, on the rule of the source it leaked from (stderr: CDX-041 and RED-006; the turn's error
  message: CDX-009; the SDK's errors[]: CC-008), never on the sites where canaries were planted.
"""

from __future__ import annotations

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

CASES = [
    ("bad_cdx_extra_detail_key_unknown", ["codex", "codex_tables"], {"CDX-005"}),
    ("bad_cc_silent_cli_is_startup", ["claude_code", "recordings"], {"CC-035"}),
    ("bad_cdx_stderr_leaked", ["codex", "codex_runs", "codex_redaction"], {"CDX-041", "RED-006"}),
    ("bad_cdx_message_leaked", ["codex_redaction"], {"CDX-009"}),
    ("bad_cc_errors_leaked", ["claude_code_redaction"], {"CC-008"}),
]


@pytest.mark.parametrize(("bad", "tiers", "rules"), CASES, ids=[c[0] for c in CASES])
def test_the_bug_is_blamed_on_its_own_rule(run_suite: RunSuite, bad: str, tiers: list[str], rules: set[str]) -> None:
    run = run_suite(
        "-q",
        "--pyargs",
        *(f"conformance.test_{tier}" for tier in tiers),
        impl=bad,
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    assert run.code == 1, run.tail
    assert set(run.violated()) == rules, run.tail
    failed = run.failed()
    assert failed and all(set(t["blamed"]) <= rules for t in failed), [(t["nodeid"], t["blamed"]) for t in failed]
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert {statuses[rule] for rule in rules} == {"violated"}


def test_unread_detail_keys_are_reached_by_a_stratified_property(run_suite: RunSuite) -> None:
    """Not only the two golden vectors: each object variant's own property catches the bug."""
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_codex",
        "-k",
        "unread_detail_keys",
        impl="bad_cdx_extra_detail_key_unknown",
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    failed = {t["nodeid"].split("[")[-1].rstrip("]") for t in run.failed()}
    assert len(failed) == 5 and set(run.violated()) == {"CDX-005"}, run.tail
