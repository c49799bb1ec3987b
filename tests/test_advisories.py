"""A SHOULD found unmet is reported, never a failure.

The provider below never shows a startup exit: from outside, that is a provider that had not
observed the exit yet, which CDX-062 allows and the SHOULD CDX-076 recommends against. The run
must pass and conform, and still say so: CDX-076 reads ``not-met`` in the JSON report, with the
finding on the tests that found it; the terminal and the Markdown summary list it.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunSuite

ADAPTER = """
from typing import Any

import reference_impl
from reference_impl import codex_process
from reference_impl.diagnostic import CODEX, FailureFacts

globals().update({name: getattr(reference_impl, name) for name in reference_impl.__all__})


class NeverShowsAStartupExit(codex_process.CodexProcessRun):
    def _failure_facts(self, stage: str) -> FailureFacts:
        if stage == "teardown":
            return super()._failure_facts(stage)
        return FailureFacts(CODEX, stage, "unknown")


def run_codex(request: dict[str, Any]) -> dict[str, Any]:
    return codex_process.run_codex(request, NeverShowsAStartupExit)
"""
SCENARIOS = "exit-during-startup or killed-during-startup or startup-rollback-fails-after-exit"


def test_a_should_not_met_is_reported_and_the_run_conforms(tmp_path: Path, run_suite: RunSuite) -> None:
    (tmp_path / "never_shows_a_startup_exit.py").write_text(ADAPTER, encoding="utf-8")
    summary = tmp_path / "summary.md"
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_codex_process",
        "-k",
        SCENARIOS,
        f"--conformance-summary={summary}",
        impl="never_shows_a_startup_exit",
        importable=[tmp_path],
        report=True,
    )
    assert run.code == 0, run.tail
    assert run.report["run"]["verdict"] == "conforms" and run.violated() == []
    [status] = [r for r in run.report["requirements"] if r["id"] == "CDX-076"]
    assert status["status"] == "not-met" and status["level"] == "SHOULD", status
    assert run.report["summary"]["not-met"] == 1
    advised = [t for t in run.report["tests"] if t.get("advisories")]
    assert {t["nodeid"].rpartition("[")[2].rstrip("]") for t in advised} == set(SCENARIOS.split(" or "))
    finding = advised[0]["advisories"][0]
    assert finding["requirements"] == ["CDX-076"] and finding["operation"] == "run_codex"
    assert "exit" not in finding["actual"]["rejected"] and finding["count"] == 1
    assert all(t["outcome"] == "passed" for t in advised)
    assert "SHOULD requirements not met" in run.output and "CDX-076" in run.output
    assert "### SHOULD requirements not met" in summary.read_text(encoding="utf-8")


def test_the_reference_meets_the_should(run_suite: RunSuite) -> None:
    run = run_suite("-q", "--pyargs", "conformance.test_codex_process", "-k", SCENARIOS, report=True)
    assert run.code == 0, run.tail
    [status] = [r for r in run.report["requirements"] if r["id"] == "CDX-076"]
    assert status["status"] == "passed", status
