"""Where two provider texts differ, as the rules of diagnostic.yaml see them.

A failure text is a failure line (fields in the order of table ``failure_line_fields``), maybe
followed by permission lines, or (for rejections) prefixed failure lines joined by "; ". Given
the text the spec expects and the one an adapter wrote, :func:`text_findings` names each aspect
that differs — a field, the permission line, the composition — so that a check blames the
requirement of that aspect and nothing wider. Each product area maps findings to its own
requirement IDs (:mod:`conformance.areas.codex.blame`, :mod:`conformance.areas.claude_code.blame`); the
format tier's mapping is :func:`format_blame`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

FAILURE_HEAD = "Product subagent failure ("
PERMISSION_MARK = " unattended decision ("
KNOWN_LABELS = ("product", "stage", "category", "HTTP status", "exit code", "signal")
_JOIN = "; "


@dataclass(frozen=True)
class Finding:
    """One aspect in which the actual text differs: ``aspect`` names it, ``expected`` and
    ``actual`` are that aspect's values (None when absent)."""

    aspect: str
    expected: str | None = None
    actual: str | None = None
    beside_other: bool = False  # a process field dropped while the other one is printed (DIA-005)


def fields_of(line: str) -> list[tuple[str, str]] | None:
    """The fields of "Product subagent failure (<label>: <value>; ...)", or None when the line
    is not so framed or carries a label the line format does not have."""
    if not line.startswith(FAILURE_HEAD) or not line.endswith(")"):
        return None
    fields = []
    for part in line[len(FAILURE_HEAD) : -1].split(_JOIN):
        label, colon, value = part.partition(": ")
        if not colon or label not in KNOWN_LABELS:
            return None
        fields.append((label, value))
    return fields


_FAILURE_LINE = re.compile(re.escape(FAILURE_HEAD) + r"[^()\n]*\)")


def line_stages(text: str) -> list[tuple[str | None, str | None] | None]:
    """The (stage, category) of each failure line in a provider text, in order: a run-result's,
    or each part of a rejection aggregate (None for a field the line lacks; None for a line that
    is not one, which the grammar checks judge)."""
    out: list[tuple[str | None, str | None] | None] = []
    for match in _FAILURE_LINE.finditer(text):
        fields = fields_of(match.group(0))
        out.append(None if fields is None else (dict(fields).get("stage"), dict(fields).get("category")))
    return out


def misstaged(text: str, stage: str, categories: Collection[str]) -> tuple[str | None, str | None] | None:
    """The (stage, category) of the first failure line of ``text`` when it is not ``stage`` with
    one of ``categories`` (that stage's row of table stages); None when it is, or when ``text``
    has no failure line (which other rules judge)."""
    lines = line_stages(text)
    if not lines or lines[0] is None or (lines[0][0] == stage and lines[0][1] in categories):
        return None
    return lines[0]


def line_findings(expected: str, actual: str) -> list[Finding]:
    """How one failure line differs from the expected one, field by field. A field that follows
    from a differing category (the HTTP status) is not judged on its own."""
    if expected == actual:
        return []
    want, got = fields_of(expected), fields_of(actual)
    if want is None:
        raise ValueError(f"the suite's own expected line is not a failure line: {expected!r}")
    if got is None:
        return [Finding("unparseable", expected, actual)]
    labels = [label for label, _ in got]
    if len(set(labels)) != len(labels) or labels != [k for k in KNOWN_LABELS if k in labels]:
        return [Finding("order", expected, actual)]
    w, g = dict(want), dict(got)
    other = {"exit code": "signal", "signal": "exit code"}
    findings = [
        Finding(
            label,
            w.get(label),
            g.get(label),
            label in other and g.get(label) is None and g.get(other[label]) is not None,
        )
        for label in KNOWN_LABELS
        if w.get(label) != g.get(label)
    ]
    if any(f.aspect in ("category", "stage") for f in findings):
        findings = [f for f in findings if f.aspect != "HTTP status"]
    return findings


def result_findings(expected: str | None, actual: str | None) -> list[Finding]:
    """How a run-result diagnostic differs: its presence, the failure line, then the permission line."""
    if expected == actual:
        return []
    if expected is None or actual is None:
        return [Finding("diagnostic", expected, actual)]
    want, got = expected.split("\n"), actual.split("\n")
    heads = [i for i, line in enumerate(got) if line.startswith(FAILURE_HEAD)]
    if len(heads) != 1:
        return [Finding("unparseable", expected, actual)]
    findings: list[Finding] = []
    if heads[0] != 0:
        findings.append(Finding("permission-order", expected, actual))
    findings += line_findings(want[0], got[heads[0]])
    want_perm, got_perm = want[1:], [line for i, line in enumerate(got) if i != heads[0]]
    if any(PERMISSION_MARK not in line for line in got_perm):
        findings.append(Finding("unparseable", expected, actual))
    elif len(got_perm) > 1:
        findings.append(Finding("permission-count", "\n".join(want_perm) or None, "\n".join(got_perm)))
    elif want_perm != got_perm:
        findings.append(Finding("permission", want_perm[0] if want_perm else None, got_perm[0] if got_perm else None))
    return findings


def rejection_findings(expected: str, actual: str, prefix: str) -> list[Finding]:
    """How a start()/dispose() rejection text differs: its prefix, its join, each failure line."""
    if expected == actual:
        return []
    want, got = expected.split(_JOIN + prefix), actual.split(_JOIN + prefix)
    if not all(w.startswith(prefix) or i > 0 for i, w in enumerate(want)):
        return [Finding("plain", expected, actual)]  # a plain text: compared whole
    if not got[0].startswith(prefix):
        return [Finding("prefix", expected, actual)]
    if len(want) != len(got):
        return [Finding("join", expected, actual)]
    findings: list[Finding] = []
    for w, g in zip(want, got, strict=True):
        w, g = w.removeprefix(prefix), g.removeprefix(prefix)
        if "\n" in g or PERMISSION_MARK in g:
            findings.append(Finding("rejection-permission", w, g))
        else:
            findings += line_findings(w, g)
    return findings


# Which rule of diagnostic.yaml each finding shows broken, for format_diagnostic itself.
_FORMAT_RULES = {
    "product": "DIA-001",
    "prefix": "DIA-015",
    "plain": "DIA-015",
    "join": "DIA-016",
    "order": "DIA-002",
    "unparseable": "DIA-002",
    "stage": "DIA-009",
    "category": "DIA-009",
    "HTTP status": "DIA-008",
    "signal": "DIA-007",
    "permission": "DIA-011",
    "permission-order": "DIA-012",
    "permission-count": "DIA-013",
    "diagnostic": "DIA-012",
    "rejection-permission": "DIA-017",
}


def format_blame(findings: list[Finding]) -> list[str]:
    """The diagnostic.yaml requirements the findings of a format_diagnostic text show broken."""
    out = []
    for f in findings:
        if f.beside_other and f.expected != "0":
            out.append("DIA-005")
        elif f.aspect == "exit code":
            out.append(exit_code_rule(f))
        elif f.aspect in ("stage", "category") and not f.actual:
            out.append("DIA-003")
        elif f.aspect in ("HTTP status", "signal") and f.expected is None:
            out.append(
                "DIA-004" if not f.actual or f.actual in ("null", "undefined", "NaN") else _FORMAT_RULES[f.aspect]
            )
        else:
            out.append(_FORMAT_RULES[f.aspect])
    return list(dict.fromkeys(out))


def exit_code_rule(f: Finding) -> str:
    """DIA-006 for a wrong or dropped value (0 included), DIA-004 for a printed non-value,
    DIA-010 for an exit code nobody observed."""
    if f.expected is None:
        return "DIA-004" if _non_value(f.actual) else "DIA-010"
    return "DIA-006"


def format_findings(kind: str, label: str, prefix: str, expected: str, actual: str) -> list[Finding]:
    """The findings of one format_diagnostic text of ``kind`` for product ``label``."""
    if expected == actual:
        return []
    if kind in ("start-rejection", "dispose-rejection"):
        return rejection_findings(expected, actual, prefix)
    if kind == "failure-line":
        return line_findings(expected, actual)
    if kind == "run-result":
        return result_findings(expected, actual)
    if not actual.startswith(label + PERMISSION_MARK):
        return [Finding("product", label, actual.partition(PERMISSION_MARK)[0])]
    return [Finding("permission", expected, actual)]


def _non_value(value: str | None) -> bool:
    """A field printed with nothing, or with a placeholder, instead of being omitted (DIA-004)."""
    return not value or value in ("null", "undefined", "NaN", "None")


def as_vector(where: str, row: dict[str, Any]) -> dict[str, str]:
    """A failing example as a golden-vector row of ``where`` (a table of a spec file), one
    JSON value per key (YAML reads JSON), ready to paste: the ``sections`` of a Violation."""
    lines = [
        f"{'- ' if i == 0 else '  '}{k}: {json.dumps(v, ensure_ascii=False)}" for i, (k, v) in enumerate(row.items())
    ]
    return {f"as a golden vector ({where})": "\n".join(lines)}
