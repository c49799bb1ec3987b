"""The conformance report: per test and per requirement, what a run showed about an adapter.

Requirement IDs travel with each test report as the ``requirements`` user property, so
the report (and JUnit XML) is right under pytest-xdist too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.spec import Spec

NOT_APPLICABLE = "not applicable: "
REQUIREMENTS_PROPERTY = "requirements"  # what a test checks: its markers
BLAMED_PROPERTY = "blamed"  # what a failure shows: the run's one attribution (conformance/blame.py)
FAILURE_ATTRIBUTE = "conformance_failure"  # a report attribute (JSON text) that survives pytest-xdist


def requirement_ids(report: pytest.TestReport, name: str = REQUIREMENTS_PROPERTY) -> list[str]:
    for key, value in report.user_properties:
        if key == name:
            return str(value).split()
    return []


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@dataclass
class Recorder:
    """Collects test outcomes as reports arrive (on the xdist controller, or in-process)."""

    tests: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(
            report.nodeid, {"nodeid": report.nodeid, "outcome": "passed", "requirements": requirement_ids(report)}
        )
        failure = getattr(report, FAILURE_ATTRIBUTE, None)
        if failure is not None:
            details = json.loads(failure)
            entry["blamed"] = requirement_ids(report, BLAMED_PROPERTY)
            entry["attribution"] = details["attribution"]
            entry["failures"] = details["failures"]
        if report.failed:
            entry["outcome"] = "failed" if report.when == "call" else "error"
            entry["message"] = _message(entry, report)
        elif report.skipped and hasattr(report, "wasxfail"):
            entry["outcome"] = "expected-failure"
            entry["message"] = str(report.wasxfail)
        elif report.skipped:
            reason = _skip_reason(report)
            entry["outcome"] = "not-applicable" if reason.startswith(NOT_APPLICABLE) else "skipped"
            entry["message"] = reason.removeprefix(NOT_APPLICABLE)

    def report(self, spec: Spec, impl: str, declaration: dict[str, Any]) -> dict[str, Any]:
        """Each requirement's one status: *violated* when a failure is blamed on it, whatever the
        markers of the failing test; *passed* when a test that checks it passed."""
        by_requirement: dict[str, list[dict[str, Any]]] = {}
        blamed_on: dict[str, list[dict[str, Any]]] = {}
        for test in self.tests.values():
            for rid in test["requirements"]:
                by_requirement.setdefault(rid, []).append(test)
            for rid in test.get("blamed", ()):
                blamed_on.setdefault(rid, []).append(test)
        requirements = []
        for req in spec.requirements():
            tests = by_requirement.get(req.id, [])
            shown = blamed_on.get(req.id, [])
            outcomes = {t["outcome"] for t in tests}
            failing = [t for t in shown if t["outcome"] in ("failed", "error")]
            if failing:
                status, reason = "violated", f"{len(failing)} failing test(s) show it"
            elif any(t["outcome"] == "expected-failure" for t in shown):
                status = "violated"
                reason = next(t["message"] for t in shown if t["outcome"] == "expected-failure")
            elif "passed" in outcomes:
                status, reason = "passed", "a test that checks it passed; no failure shows it"
            elif outcomes & {"failed", "error", "expected-failure"}:
                others = sorted({rid for t in tests for rid in t.get("blamed", ())} - {req.id})
                status = "not-testable"
                reason = f"its tests stopped on failures of other requirements ({', '.join(others) or 'none'})"
            elif req.excluded:
                status, reason = "not-testable", "excluded in the spec: " + " ".join(req.excluded.split())
            elif not tests:
                status, reason = "not-testable", "no test of this run checks it"
            elif "skipped" in outcomes:
                status, reason = "not-testable", "its tests could not run here"
            else:
                status, reason = "not-applicable", "the adapter does not claim what its tests need"
            requirements.append(
                {
                    "id": req.id,
                    "level": req.level,
                    "title": req.title,
                    "status": status,
                    "reason": reason,
                    "tests": sorted({t["nodeid"] for t in [*tests, *shown]}),
                }
            )
        summary = {
            s: sum(r["status"] == s for r in requirements)
            for s in ("passed", "violated", "not-testable", "not-applicable")
        }
        return {
            "suite": {"name": "subagent-conformance", "version": conformance.__version__},
            "spec_version": spec.version,
            "adapter": {"impl": impl, "declaration": declaration},
            "summary": summary,
            "requirements": requirements,
            "tests": sorted(self.tests.values(), key=lambda t: t["nodeid"]),
        }


def _message(entry: dict[str, Any], report: pytest.TestReport) -> str:
    """One line: what the failure shows, by requirement, else pytest's first error line."""
    if entry.get("attribution") == "exact":
        shown = [", ".join(r["id"] for r in f["requirements"]) for f in entry["failures"]]
        where = [f["operation"] for f in entry["failures"] if f.get("operation")]
        return f"violates {'; '.join(shown)}" + (f" (operation {', '.join(dict.fromkeys(where))})" if where else "")
    return _first_line(report.longreprtext)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("E "):
            return line[1:].strip()[:500]
    return (text.strip().splitlines() or [""])[-1][:500]


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def markdown_summary(report: dict[str, Any]) -> str:
    """A Markdown page fit for a CI step summary: the verdict, then what failed and why."""
    summary = report["summary"]
    verdict = "**violated**" if summary["violated"] else "conforms"
    declaration = report["adapter"]["declaration"]
    lines = [
        f"## Subagent result contract: `{report['adapter']['impl']}` {verdict}",
        "",
        f"Spec {report['spec_version']}, suite {report['suite']['version']}; claims: "
        f"bindings {', '.join(declaration['bindings']) or 'none'}; "
        f"providers {', '.join(f'{k} {v}' for k, v in declaration['providers'].items()) or 'none'}; "
        f"process drivers {', '.join(declaration['process_drivers']) or 'none'}.",
        "",
        "| status | requirements |",
        "|---|---|",
        *(f"| {status} | {count} |" for status, count in summary.items()),
        "",
    ]
    violated = [r for r in report["requirements"] if r["status"] == "violated"]
    if violated:
        failing = {t["nodeid"]: t for t in report["tests"] if t["outcome"] in ("failed", "error")}
        lines += ["### Violated requirements", "", "| requirement | failing tests |", "|---|---|"]
        for req in violated:
            tests = [f"`{n}`: {failing[n].get('message', '')}" for n in req["tests"] if n in failing]
            cell = "<br>".join(t.replace("|", "\\|") for t in tests[:5])
            more = f"<br>… and {len(tests) - 5} more" if len(tests) > 5 else ""
            lines.append(f"| {req['id']} {req['title']} | {cell}{more} |")
        lines.append("")
    return "\n".join(lines)
