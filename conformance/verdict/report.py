"""The conformance report: per test and per requirement, what a run showed about an adapter.

Requirement IDs travel with each test report as the ``requirements`` user property, so
the report (and JUnit XML) is right under pytest-xdist too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.spec import Requirement, Spec
from conformance.verdict.advisories import ADVISORIES_PROPERTY, advised
from conformance.verdict.blame import printable
from conformance.verdict.gaps import DATA_GAP_PROPERTY
from conformance.verdict.rerun import RULES_PROPERTY

NOT_APPLICABLE = "not applicable: "
REQUIREMENTS_PROPERTY = "requirements"  # what a test checks: its markers
BLAMED_PROPERTY = "blamed"  # what a failure shows: the run's one attribution (conformance/verdict/blame.py)
FAILURE_ATTRIBUTE = "conformance_failure"  # a report attribute (JSON text) that survives pytest-xdist
EXPECTED_ATTRIBUTE = "conformance_expected"  # likewise: the expected-failure entry that covered a failure
# What a test did not check after all (an operation not claimed, a condition that never arose):
# JSON {requirement ID: why}; such a requirement is not among the test's requirements.
UNCHECKED_PROPERTY = "unchecked"


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
        for key, value in report.user_properties:
            if key == DATA_GAP_PROPERTY:
                entry[DATA_GAP_PROPERTY] = str(value)
            if key == ADVISORIES_PROPERTY and (found := json.loads(str(value))):
                entry[ADVISORIES_PROPERTY] = found
            if key == UNCHECKED_PROPERTY:
                entry.setdefault(UNCHECKED_PROPERTY, {}).update(json.loads(str(value)))
                entry["requirements"] = [r for r in entry["requirements"] if r not in entry[UNCHECKED_PROPERTY]]
        failure = getattr(report, FAILURE_ATTRIBUTE, None)
        if failure is not None:
            details = json.loads(failure)
            entry["blamed"] = requirement_ids(report, BLAMED_PROPERTY)
            entry["attribution"] = details["attribution"]
            entry["failures"] = details["failures"]
            rules = requirement_ids(report, RULES_PROPERTY)
            if rules and rules != entry["blamed"]:  # some blamed requirements are only consequences
                entry["rules"] = rules
        if report.failed:
            entry["outcome"] = "failed" if report.when == "call" and DATA_GAP_PROPERTY not in entry else "error"
            entry["message"] = entry.get(DATA_GAP_PROPERTY) or _message(entry, report)
        elif report.skipped and hasattr(report, "wasxfail"):
            entry["outcome"] = "expected-failure"
            entry["message"] = str(report.wasxfail)
            if (covering := getattr(report, EXPECTED_ATTRIBUTE, None)) is not None:
                entry["expected"] = json.loads(covering)
        elif report.skipped:
            reason = _skip_reason(report)
            entry["outcome"] = "not-applicable" if reason.startswith(NOT_APPLICABLE) else "skipped"
            entry["message"] = reason.removeprefix(NOT_APPLICABLE)

    def report(self, spec: Spec, impl: str, declaration: dict[str, Any] | None, run: dict[str, Any]) -> dict[str, Any]:
        """Each requirement's one status (ADP-022): *violated* when an unexpected failure is blamed
        on it, whatever the markers of the failing test; *passed* when a test that checks it passed."""
        by_requirement: dict[str, list[dict[str, Any]]] = {}
        blamed_on: dict[str, list[dict[str, Any]]] = {}
        advised_on: dict[str, list[dict[str, Any]]] = {}
        unchecked: dict[str, str] = {}
        for test in self.tests.values():
            unchecked.update(test.get(UNCHECKED_PROPERTY, {}))
            for rid in test["requirements"]:
                by_requirement.setdefault(rid, []).append(test)
            for rid in test.get("blamed", ()):
                blamed_on.setdefault(rid, []).append(test)
            for rid in advised(test):
                advised_on.setdefault(rid, []).append(test)
        requirements = [
            _requirement_status(
                req,
                by_requirement.get(req.id, []),
                blamed_on.get(req.id, []),
                advised_on.get(req.id, []),
                unchecked.get(req.id),
            )
            for req in spec.requirements()
        ]
        summary = {s: sum(r["status"] == s for r in requirements) for s in STATUSES}
        return {
            "suite": {"name": "subagent-conformance", "version": conformance.__version__},
            "spec_version": spec.version,
            "adapter": {"impl": impl, "declaration": declaration},
            "run": run,
            "summary": summary,
            "requirements": requirements,
            "tests": sorted(self.tests.values(), key=lambda t: t["nodeid"]),
        }


# not-met: a SHOULD its tests found unmet (conformance/verdict/advisories.py); it never decides the verdict.
STATUSES = ("passed", "violated", "expected-failure", "not-met", "not-testable", "not-applicable")


def _requirement_status(
    req: Requirement,
    tests: list[dict[str, Any]],
    shown: list[dict[str, Any]],
    advised: list[dict[str, Any]],
    unchecked: str | None = None,
) -> dict[str, Any]:
    outcomes = {t["outcome"] for t in tests}
    failing = [t for t in shown if t["outcome"] in ("failed", "error")]
    gaps = [t for t in tests if DATA_GAP_PROPERTY in t]
    expected = [t for t in shown if t["outcome"] == "expected-failure"]
    extra: dict[str, Any] = {}
    if failing:
        status, reason = "violated", f"{len(failing)} failing test(s) show it"
        rules = [t.get("rules", t.get("blamed", ())) for t in failing]
        if all(req.id not in r for r in rules):  # no failure broke it as a rule: it follows from theirs
            extra["consequence_of"] = sorted({rid for r in rules for rid in r})
    elif expected:
        status, reason = "expected-failure", expected[0]["message"]
        extra["expected"] = expected[0].get("expected", {"reason": expected[0]["message"]})
    elif advised and req.level == "SHOULD":
        status = "not-met"
        reason = f"{len(advised)} test(s) found this SHOULD unmet (reported; it does not decide the verdict)"
    elif gaps:  # the suite lacks data a test of it needs: not the adapter's fault, and never passed
        status, reason = "not-testable", f"the suite's data has a gap: {gaps[0][DATA_GAP_PROPERTY]}"
    elif "passed" in outcomes:
        status, reason = "passed", "a test that checks it passed; no failure shows it"
    elif outcomes & {"failed", "error", "expected-failure"}:
        others = sorted({rid for t in tests for rid in t.get("blamed", ())} - {req.id})
        status = "not-testable"
        reason = f"its tests stopped on failures of other requirements ({', '.join(others) or 'none'})"
    elif req.excluded:
        status, reason = "not-testable", "excluded in the spec: " + " ".join(req.excluded.split())
    elif not tests and unchecked is not None:  # its tests ran, but none could check it (why)
        applicable = not unchecked.startswith(NOT_APPLICABLE)
        status, reason = "not-testable" if applicable else "not-applicable", unchecked.removeprefix(NOT_APPLICABLE)
    elif not tests:
        status, reason = "not-testable", "no test of this run checks it"
    elif "skipped" in outcomes:
        # Only a test of a claimed surface is skipped here: what the adapter does not claim is
        # skipped as not applicable before any other reason (conformance/conftest.py, claims).
        status, reason = "not-testable", "its tests could not run here"
    else:
        status, reason = "not-applicable", "the adapter does not claim what its tests need"
    return {
        "id": req.id,
        "level": req.level,
        "title": req.title,
        "status": status,
        "reason": reason,
        "tests": sorted({t["nodeid"] for t in [*tests, *shown, *advised]}),
        **extra,
    }


def verdict(summary: dict[str, int], exit_status: int) -> str:
    """One word for the run that agrees with its exit status."""
    if exit_status == int(pytest.ExitCode.USAGE_ERROR):
        return "usage-error"
    if summary["violated"]:
        return "violated"
    if exit_status != 0:
        return "incomplete"  # e.g. a stale expected failure, an interrupted run, a suite error
    return "conforms-with-expected-failures" if summary["expected-failure"] else "conforms"


def _message(entry: dict[str, Any], report: pytest.TestReport) -> str:
    """One line: what the failure shows, by requirement, and its first located difference (or the
    error an adapter raised), else pytest's first error line."""
    if entry.get("attribution") == "exact":
        first = entry["failures"][0]
        shown = ", ".join(dict.fromkeys(r["id"] for f in entry["failures"] for r in f["requirements"]))
        where = f" (operation {first['operation']})" if first.get("operation") else ""
        detail = " ".join(str(first.get("difference", "")).split())
        return f"violates {shown}{where}" + (f": {detail}" if detail else "")[:400]
    return _first_line(report.longreprtext)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("E "):
            return line[1:].strip()[:500]
    return (text.strip().splitlines() or [""])[-1][:500]


# How the report writes a number JSON has no token for (ADP-022): an object no JSON number
# could be, so that a reader tells it from the string "NaN" an adapter may have answered.
NON_JSON_NUMBER = "non-JSON number"


def strict_json(value: Any) -> Any:
    """``value`` as strict JSON can carry it (RFC 8259 with no NaN or Infinity token, I-JSON's
    no lone surrogate): whatever an adapter answered reaches jq, JSON.parse and CI uploaders.
    A non-finite float becomes ``{"non-JSON number": "NaN"}`` (or "Infinity", "-Infinity"); a
    lone surrogate in a string or key, the six characters of its escape, as the terminal shows it."""
    if isinstance(value, float) and not math.isfinite(value):
        return {NON_JSON_NUMBER: "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(k)): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def write_json(path: Path, report: dict[str, Any]) -> None:
    """Write the report as strict JSON; allow_nan=False makes a value that escaped strict_json a
    crash here rather than a file that only Python reads back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(strict_json(report), indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def shutdown_statuses(report: dict[str, Any], shutdown: str | None, leftovers: list[str]) -> None:
    """ADP-020 and ADP-021 as the end of the session showed them, which no test's outcome carries:
    how the exec adapter took end of input (``shutdown``: "exited", or what it did instead; None
    when not tried), and the processes that outlived it. A SHOULD unmet is not-met, never violated."""
    for req in report["requirements"]:
        if req["id"] == "ADP-020" and shutdown is not None and req["status"] in ("passed", "not-testable"):
            if shutdown == "exited":
                req["status"], req["reason"] = "passed", "the adapter exited with status 0 once its stdin closed"
            else:
                req["status"], req["reason"] = "not-met", f"at the end of the run the adapter {shutdown}"
        if req["id"] == "ADP-021" and leftovers and req["status"] != "violated":
            req["status"] = "violated"
            killed = "; ".join(leftovers)
            req["reason"] = f"{len(leftovers)} process(es) outlived the adapter and were killed: {killed}"
    report["summary"] = {s: sum(r["status"] == s for r in report["requirements"]) for s in STATUSES}
