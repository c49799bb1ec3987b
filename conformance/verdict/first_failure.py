"""Each violated requirement's first failure, whole, for the Markdown summary (issue #30, item 3):
the table's one line per test is cut to fit, so a reader of a CI step summary would otherwise
need the log to see the input, expected and actual. One collapsible block per requirement."""

from __future__ import annotations

import html
import json
from typing import Any

from conformance.verdict.inert import markdown_safe, terminal_safe


def _pre(text: str) -> str:
    """``text`` inert in a ``<pre>`` of the HTML block: escaped (no tag of it opens or closes), and
    without blank lines, which would end the block and hand the rest to Markdown."""
    lines = [html.escape(terminal_safe(line), quote=False) for line in text.splitlines() if line.strip()]
    return "<pre>" + "\n".join(lines) + "</pre>"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def failure_text(test: dict[str, Any], rid: str) -> str:
    """The test's first failure that shows ``rid`` (its first failure, else its message): the
    difference, the operation and its input, expected and actual, and what the failure adds."""
    records = test.get("failures") or []
    record = next((f for f in records if any(r["id"] == rid for r in f["requirements"])), None)
    if record is None:
        return str(test.get("message", ""))
    lines = [str(record.get("difference") or test.get("message", ""))]
    if record.get("operation"):
        lines.append(f"operation: {record['operation']}")
    for key in ("input", "expected", "actual"):
        if record.get(key) is not None:
            lines.append(f"{key}: {_shown(record[key])}")
    for title, text in (record.get("sections") or {}).items():
        lines += ["", f"{title}:", str(text)]
    return "\n".join(lines)


def first_failures(report: dict[str, Any]) -> list[str]:
    """The summary's lines: per violated requirement, its first failing test, in a ``<details>`` block."""
    failing = [t for t in report["tests"] if t["outcome"] in ("failed", "error")]
    lines: list[str] = []
    for req in (r for r in report["requirements"] if r["status"] == "violated"):
        test = next((t for t in failing if req["id"] in t.get("blamed", ())), None)
        if test is None:
            continue
        title = markdown_safe(" ".join(f"{req['id']}: {test['nodeid']}".split()))
        lines += ["<details>", f"<summary>{title}</summary>", _pre(failure_text(test, req["id"])), "</details>", ""]
    return ["### First failure of each violated requirement", "", *lines] if lines else []
