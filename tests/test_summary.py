"""The Markdown summary reads right on a CI page: every column has a header, the claims line
names every key of the declaration, a short value's difference reads as the two values, and
what the adapter wrote (its error messages, its stderr) is shown inert, in the summary and on the
terminal: no HTML tag of it opens or closes, no terminal control sequence of it acts."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from conformance.verdict.blame import Violation
from conformance.verdict.report import STATUSES
from conformance.verdict.summary import markdown_summary
from tests.conftest import RunSuite

HOSTILE = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[2J\x9b31m </details><img src=x onerror=alert(1)>"

ADAPTER = f"""
import json, sys
HOSTILE = {HOSTILE!r}
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "describe":
        answer = {{"protocol": "1", "bindings": ["chunk-events"], "providers": {{}}, "process_drivers": []}}
        print(json.dumps({{"id": request["id"], "output": answer}}), flush=True)
    else:
        print(HOSTILE, file=sys.stderr, flush=True)
        print(json.dumps({{"id": request["id"], "error": {{"message": HOSTILE}}}}), flush=True)
"""


def _report(declaration: dict[str, Any], **run: Any) -> dict[str, Any]:
    requirement = {"id": "SEL-008", "level": "MUST", "title": "t", "status": "violated", "reason": "1 failing test"}
    unmet = {"id": "SEL-009", "level": "SHOULD", "title": "t", "status": "not-met", "reason": "found unmet"}
    test = {"nodeid": "test_selection.py::test_x", "outcome": "failed", "blamed": ["SEL-008"], "message": HOSTILE}
    return {
        "suite": {"name": "subagent-conformance", "version": "0"},
        "spec_version": "1.0.0",
        "adapter": {"impl": "exec:./adapter", "declaration": declaration},
        "run": {"date": "2026-01-01T00:00:00+00:00", "exit_status": 1, "verdict": "violated", **run},
        "summary": dict.fromkeys(STATUSES, 1),
        "requirements": [requirement, unmet],
        "tests": [test],
    }


def _claims_line(declaration: dict[str, Any]) -> str:
    lines = markdown_summary(_report(declaration), "x/contract.md").splitlines()
    return next(line for line in lines if line.startswith("Claims:"))


def _header_rows(text: str) -> list[str]:
    lines = text.splitlines()
    return [lines[i - 1] for i, line in enumerate(lines) if re.fullmatch(r"\|(---\|)+", line)]


def test_every_column_has_a_header() -> None:
    declaration = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": []}
    headers = _header_rows(markdown_summary(_report(declaration), "https://example.org/contract.md"))
    assert len(headers) == 4, headers  # counts, violated requirements, failing tests, SHOULDs not met
    for row in headers:
        assert all(cell.strip() for cell in row.strip("|").split("|")), row


def test_the_claims_line_names_every_declared_key() -> None:
    declaration = {
        "protocol": "1", "bindings": ["chunk-events", "text-stream"], "providers": {"codex": "0.171.0"},
        "process_drivers": ["codex"], "background": ["job"], "settlements": ["continuable"],
        "operations": ["select_output", "settle_run"],
    }  # fmt: skip
    claims = _claims_line(declaration)
    assert claims == (
        "Claims: protocol 1; bindings chunk-events, text-stream; providers codex 0.171.0; process drivers codex; "
        "background job; settlements continuable; operations select_output, settle_run."
    )
    # Left out, an optional key still shows, with what leaving it out claims (the over-claim of issue #30).
    bare = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": []}
    claims = _claims_line(bare)
    assert "background none" in claims
    assert "settlements every path its bindings take (not narrowed)" in claims
    assert "operations every one its claims require" in claims


def test_a_short_value_differs_as_the_two_values() -> None:
    found = Violation(
        ["SEL-008"], operation="settle_run", expected={"stopReason": "aborted"}, actual={"stopReason": "max-tokens"}
    )
    assert found.detail == 'stopReason: expected "aborted", got "max-tokens"'
    # Characters that print alike keep the code points that tell them apart.
    alike = Violation(["SEL-008"], operation="settle_run", expected={"text": "a b"}, actual={"text": "a\u00a0b"})
    assert "expected U+0020, got U+00A0" in alike.detail


def _inert(text: str) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), "a control character of the adapter got through"
    assert "<img" not in text, "a tag of the adapter opened"
    # The summary's own collapsible blocks (each violated requirement's first failure) pair up; the
    # adapter's "</details>" closed none of them.
    assert text.count("</details>") == text.count("<details>") == text.count("\n</details>\n"), text


def test_adapter_text_in_a_written_summary_is_inert() -> None:
    declaration = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": []}
    text = markdown_summary(_report(declaration), "x/contract.md")
    _inert(text)
    assert "&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;" in text and "\\x1b[2J" in text  # still readable
    stopped = _report(declaration, verdict="usage-error", error=f"```\n{HOSTILE}")
    text = markdown_summary(stopped, "x/contract.md")
    _inert(text.replace("</details><img src=x onerror=alert(1)>", ""))  # inside a fence, HTML is text
    fence = next(line for line in text.splitlines() if line.startswith("```"))
    assert fence == "````text", "the fence is longer than any backtick run of the error"


def test_adapter_text_is_inert_in_the_terminal_and_the_summary(tmp_path: Path, run_suite: RunSuite) -> None:
    (tmp_path / "adapter.py").write_text(ADAPTER, encoding="utf-8")
    summary = tmp_path / "summary.md"
    done = run_suite(
        "--requirement=SEL-008", "--pyargs", "conformance.test_selection", f"--conformance-summary={summary}",
        impl=f"exec:{sys.executable} {tmp_path / 'adapter.py'}",
    )  # fmt: skip
    assert done.code == 1, done.tail
    assert "\\x1b]8;;https://evil.example\\x07click" in done.output, done.tail  # shown, escaped
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", done.output.replace("\r\n", "\n"))
    _inert(summary.read_text(encoding="utf-8"))
