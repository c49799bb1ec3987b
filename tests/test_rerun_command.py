"""A failing run ends with the one command that reruns just the requirements it violated (issue #30,
item 5), on the terminal and in the Markdown summary: shell-quoted, naming exactly the violated
rules, and reproducing the failure when run."""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance.spec.resources import fixtures_dir
from conformance.verdict.rerun import rerun_command, rerun_ids
from tests.conftest import RunSuite

BAD = "bad_pushed_text_apart"  # fixtures/known_bad/selection.yaml: caught by SEL-022 alone
PREFIX = "python -m pytest --pyargs conformance"


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(PREFIX)]


def test_a_failing_run_prints_the_command_that_reruns_its_violated_requirements(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    importable = [fixtures_dir() / "known_bad"]
    run = run_suite(
        "-q", "--requirement=SEL-022", "--pyargs", "conformance.test_selection", f"--conformance-summary={summary}",
        impl=BAD, importable=importable, report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    assert set(run.violated()) == {"SEL-022"}, run.tail
    expected = f"{PREFIX} --impl={BAD} --requirement=SEL-022"
    assert _commands(run.out) == [expected], run.tail
    text = summary.read_text(encoding="utf-8")
    assert "### Rerun just the violated requirements" in text
    assert _commands(text) == [expected]
    # Run as printed (nested), it reproduces the failure, and only that one.
    words = shlex.split(expected)[3:]
    again = run_suite("-q", *[w for w in words if not w.startswith("--impl=")], impl=BAD, importable=importable,
                      report=True)  # fmt: skip
    assert again.code == 1, again.tail
    assert set(again.violated()) == {"SEL-022"}, again.tail


def test_a_passing_run_prints_no_rerun_command(run_suite: RunSuite, tmp_path: Path) -> None:
    run = run_suite("-q", "--requirement=SEL-022", "--pyargs", "conformance.test_selection", impl="reference_impl")
    assert run.code == 0, run.tail
    assert not _commands(run.out)


def test_the_command_survives_copy_and_paste_of_an_exec_command_line() -> None:
    report = {
        "requirements": [
            {"id": "SEL-022", "level": "MUST", "status": "violated"},
            {"id": "SEL-027", "level": "MUST", "status": "violated"},  # a golden vector's consequence
            {"id": "SEL-009", "level": "SHOULD", "status": "not-met"},
            {"id": "SEL-001", "level": "MUST", "status": "satisfied"},
        ]
    }
    ids = rerun_ids(report, {"SEL-022"})
    assert ids == ["SEL-022"]
    assert rerun_ids(report) == ["SEL-022", "SEL-027"]  # no rule known: every violated MUST
    command = rerun_command("exec:node adapter.js", ids)
    assert command == f"{PREFIX} '--impl=exec:node adapter.js' --requirement=SEL-022"
    assert command is not None and shlex.split(command)[5] == "--impl=exec:node adapter.js"
    assert rerun_command("x", []) is None
