"""Over-claiming explains itself (issue #30, item 6): when every test of one claimed settlement
path fails, the terminal and the Markdown summary say that the claim may be wider than the harness,
and name the declaration key that narrows it, `settlements` (ADP-026)."""

from __future__ import annotations

from pathlib import Path

from conformance.spec.resources import fixtures_dir
from conformance.verdict.overclaim import over_claims
from tests.conftest import RunSuite

HINT = "the claim may be wider than the harness"


def _hints(text: str) -> list[str]:
    return [line for line in text.splitlines() if HINT in line]


def test_a_harness_of_one_settlement_path_claiming_all_is_told_to_narrow_settlements(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    """ADP-026: leaving `settlements` out claims every path; the two it lacks fail, the one it has passes."""
    summary = tmp_path / "summary.md"
    run = run_suite(
        "-q", "--pyargs", "conformance.test_results", f"--conformance-summary={summary}",
        impl="fault_one_settlement_path", importable=[fixtures_dir() / "faults"], report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    for shown in (run.out, summary.read_text(encoding="utf-8")):
        hints = _hints(shown)
        paths = sorted(
            p for p in ("in-process-one-shot", "continuable", "out-of-process") if any(p in h for h in hints)
        )
        assert paths == ["in-process-one-shot", "out-of-process"], shown[-4000:]
        assert all("`settlements`" in h and "claims every path" in h for h in hints), hints
    assert "### Claims that may be wider than the harness" in summary.read_text(encoding="utf-8")


def test_a_conforming_run_gives_no_hint(run_suite: RunSuite) -> None:
    run = run_suite("-q", "--pyargs", "conformance.test_results", impl="reference_impl")
    assert run.code == 0, run.tail
    assert not _hints(run.out)


def test_the_hint_needs_every_test_of_the_claim_to_fail() -> None:
    tests = [
        {"nodeid": "a", "outcome": "failed"},
        {"nodeid": "b", "outcome": "passed"},
        {"nodeid": "c", "outcome": "failed"},
        {"nodeid": "d", "outcome": "not-applicable"},
    ]
    claimed = {
        "a": [("bindings", "text-stream"), ("operations", "settle_run")],
        "b": [("operations", "settle_run")],
        "c": [("bindings", "text-stream")],
        "d": [("bindings", "text-stream")],
    }
    [line] = over_claims(tests, claimed, {"bindings": ["text-stream"], "operations": ["settle_run"]})
    assert "selection binding text-stream failed (2 test(s))" in line
    assert "`bindings`" in line
