"""Any string an adapter returns is survivable: lone surrogates reach every report escaped.

An adapter may return a lone surrogate: over exec as the JSON escape "\\ud83d" (a JavaScript
string cut inside a pair), in-process as a Python str. No terminal, UTF-8 file or XML document
can carry one raw. Every operation's failure path — its oracle, its blame, the Violation's text,
the terminal, the JSON report, the Markdown summary, JUnit and the matrix — must show it escaped and still
blame exactly. The run is a real subprocess with a strict UTF-8 stdout, as CI's terminal is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.spec import load_spec
from conformance.verdict.blame import printable

DATA = Path(__file__).resolve().parent / "data"
ADAPTER = DATA / "surrogate_adapter.py"
# Every operation once at least, cheaply: the first golden vector of each pure operation's table,
# the selection property, and a scenario per product.
VECTOR_TABLES = [
    ("selection", "golden_vectors"),
    ("results", "settle_vectors"),
    ("results", "render_vectors"),
    ("diagnostic", "line_vectors"),
    ("diagnostic", "bound_vectors"),
    ("claude-code", "outcome_vectors"),
    ("codex", "outcome_vectors"),
    ("background", "notice_vectors"),
    ("background", "completion_vectors"),
]
_SPEC = load_spec()
SELECTION = " or ".join(
    [
        *(f"vector and {_SPEC.table(area, table).rows[0]['name']}" for area, table in VECTOR_TABLES),
        "test_select_output_follows_the_rule",
        "test_job_vector",  # a killed Job's outcome holds no text, so job_output is reached too
        "completed-answer",
        "seed-partial-text-survives",
        # a notice is held to the adapter's own job_outcome: a killed Job's outcome holds no text to
        # poison, so this is where job_notice's own failure path is reached
        "killed-start-notice",
    ]
)
OPERATIONS = [
    "select_output",
    "fold_output",
    "settle_run",
    "render_tool_result",
    "format_diagnostic",
    "bound_diagnostic",
    "claude_code_outcome",
    "codex_outcome",
    "job_outcome",
    "job_output",
    "job_notice",
    "settlement_notice",
    "run_claude_code",
    "run_codex",
]


def _run(tmp_path: Path, impl: str, **env: str) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    out = tmp_path / "out"
    out.mkdir()
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:xdist",
        "-q",
        "--pyargs",
        "conformance",
        "-k",
        SELECTION,
        f"--impl={impl}",
        f"--conformance-report={out / 'report.json'}",
        f"--conformance-summary={out / 'summary.md'}",
        f"--junitxml={out / 'junit.xml'}",
    ]
    environment = {
        **os.environ,
        "PYTHONPATH": str(DATA),
        "PYTHONIOENCODING": "utf-8:strict",  # a terminal that cannot take a lone surrogate either
        "SUBAGENT_CONFORMANCE_PROFILE": "selftest",
        **env,
    }
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, timeout=900, check=False)
    return done, out


def _reports(done: subprocess.CompletedProcess[bytes], out: Path) -> dict[str, object]:
    """Every output reads as strict UTF-8 (JSON and XML well-formed) and the run ended on its tests."""
    terminal = done.stdout.decode("utf-8") + done.stderr.decode("utf-8")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, terminal[-3000:]
    assert "INTERNALERROR" not in terminal and "UnicodeEncodeError" not in terminal, terminal[-3000:]
    report = json.loads((out / "report.json").read_bytes().decode("utf-8"))
    summary = (out / "summary.md").read_bytes().decode("utf-8")
    ET.parse(out / "junit.xml")
    # The matrix reads the report back (its escapes are lone surrogates again) and writes pages.
    matrix = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "matrix", str(out / "report.json"), "--html", str(out / "m.html")],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
    )
    assert matrix.returncode == 0, matrix.stderr.decode("utf-8", "replace")
    (out / "m.html").read_bytes().decode("utf-8")
    return {"report": report, "terminal": terminal, "summary": summary}


@pytest.mark.parametrize("form", ["python", "exec"])
def test_lone_surrogates_in_every_answer_are_blamed_and_reported(tmp_path: Path, form: str) -> None:
    impl = "surrogate_adapter" if form == "python" else f"exec:{sys.executable} {ADAPTER}"
    done, out = _run(tmp_path, impl)
    found = _reports(done, out)
    report = found["report"]
    assert isinstance(report, dict)
    failed = [t for t in report["tests"] if t["outcome"] == "failed"]
    assert failed and all(t["attribution"] == "exact" for t in failed), [
        (t["nodeid"], t.get("message")) for t in failed if t["attribution"] != "exact"
    ]
    blamed_operations = {f["operation"] for t in failed for f in t["failures"]}
    assert set(OPERATIONS) <= blamed_operations, sorted(set(OPERATIONS) - blamed_operations)
    # The lone surrogate is shown escaped where the failure shows the adapter's value.
    assert "\\ud83d" in str(found["terminal"]) and "\\ud83d" in str(found["summary"])


@pytest.mark.parametrize("form", ["python", "exec"])
def test_an_error_holding_lone_surrogates_fails_only_its_tests(tmp_path: Path, form: str) -> None:
    impl = "surrogate_adapter" if form == "python" else f"exec:{sys.executable} {ADAPTER}"
    done, out = _run(tmp_path, impl, SURROGATE_ADAPTER_RAISES="1")
    report = _reports(done, out)["report"]
    assert isinstance(report, dict)
    failed = [t for t in report["tests"] if t["outcome"] == "failed"]
    assert failed and all(t["blamed"] == ["ADP-013"] for t in failed), {
        t["nodeid"]: t.get("blamed") for t in failed if t["blamed"] != ["ADP-013"]
    }


def test_printable_escapes_only_lone_surrogates() -> None:
    assert printable("a\ud83db😀\udc00") == "a\\ud83db😀\\udc00"
    assert json.loads(printable(json.dumps("x\ud83d", ensure_ascii=False))) == "x\ud83d"
