"""The run's evidence: the JSON report (validated by its schema), the Markdown summary,
and JUnit XML whose test cases carry their requirement IDs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.resources import fixtures_dir
from conformance.spec import load_spec, schema_validator
from tests.conftest import RunSuite


@pytest.mark.requirement("ADP-022")
def test_report_summary_and_junit_of_a_rejected_adapter(tmp_path: Path, run_suite: RunSuite) -> None:
    report, summary, junit = tmp_path / "report.json", tmp_path / "summary.md", tmp_path / "junit.xml"
    done = run_suite(
        "-q", "--requirement=SEL-008", "--pyargs", "conformance.test_selection", f"--conformance-report={report}",
        f"--conformance-summary={summary}", f"--junitxml={junit}",
        impl="bad_no_text_fallback", importable=[fixtures_dir() / "known_bad"],
    )  # fmt: skip
    assert done.code == 1, done.tail

    data = json.loads(report.read_text(encoding="utf-8"))
    errors = list(schema_validator(load_spec().root, "report").iter_errors(data))
    assert not errors, errors[0].message
    statuses = {r["id"]: r["status"] for r in data["requirements"]}
    assert statuses["SEL-008"] == "violated"
    assert len(statuses) == sum(1 for _ in load_spec().requirements())
    assert all(t["requirements"] for t in data["tests"])

    text = summary.read_text(encoding="utf-8")
    assert "`bad_no_text_fallback` **violated**" in text and "| SEL-008 " in text

    cases = ET.parse(junit).getroot().iter("testcase")
    properties = [{p.get("name"): p.get("value") for p in case.iter("property")} for case in cases]
    assert properties and all("SEL-008" in (p["requirements"] or "").split() for p in properties)
