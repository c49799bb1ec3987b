"""The run's evidence: the JSON report (validated by its schema), the Markdown summary, and JUnit
XML whose test cases carry their requirement IDs — all from the run's one attribution."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import load_spec, schema_validator
from conformance.spec.resources import fixtures_dir
from conformance.verdict.report import STATUSES
from conformance.verdict.summary import published_contract
from tests.conftest import RunSuite

KNOWN_BAD = [fixtures_dir() / "known_bad"]


def _valid(data: dict[str, Any]) -> None:
    errors = list(schema_validator(load_spec().root, "report").iter_errors(data))
    assert not errors, f"{errors[0].message} at {list(errors[0].absolute_path)}"


@pytest.mark.requirement("ADP-022")
def test_report_summary_and_junit_of_a_rejected_adapter(tmp_path: Path, run_suite: RunSuite) -> None:
    report, summary, junit = tmp_path / "report.json", tmp_path / "summary.md", tmp_path / "junit.xml"
    done = run_suite(
        "-q", "--requirement=SEL-008", "--pyargs", "conformance.test_selection", f"--conformance-report={report}",
        f"--conformance-summary={summary}", f"--junitxml={junit}",
        impl="bad_no_text_fallback", importable=KNOWN_BAD,
    )  # fmt: skip
    assert done.code == 1, done.tail

    data = json.loads(report.read_text(encoding="utf-8"))
    _valid(data)
    statuses = {r["id"]: r["status"] for r in data["requirements"]}
    assert statuses["SEL-008"] == "violated"
    assert len(statuses) == sum(1 for _ in load_spec().requirements())
    assert all(t["requirements"] for t in data["tests"])
    assert data["run"]["verdict"] == "violated" and data["run"]["exit_status"] == 1

    text = summary.read_text(encoding="utf-8")
    assert "`bad_no_text_fallback` **violates the contract**" in text and "Exit status 1." in text
    # by default IDs link into the contract published with this version of the suite, wherever it is read
    contract = published_contract().removesuffix(".md")
    assert contract.startswith("https://") and "/blob/v" in contract, contract
    assert f"| [SEL-008]({contract}/selection.md#SEL-008) | MUST |" in text
    failing = [t["nodeid"] for t in data["tests"] if t["outcome"] == "failed"]
    assert all(text.count(f"`{nodeid}`") == 1 for nodeid in failing), "each failing test is listed once"
    # the violated requirement's first failure, whole: its input as the report has it, not cut to the table's cell
    first = next(t for t in data["tests"] if "SEL-008" in t.get("blamed", ()))
    block = text.partition(f"<summary>SEL-008: {first['nodeid']}</summary>")[2].partition("</details>")[0]
    shown = json.dumps(first["failures"][0]["input"], ensure_ascii=False).replace("&", "&amp;").replace("<", "&lt;")
    assert block.startswith("\n<pre>") and f"input: {shown.replace('>', '&gt;')}" in block, block[:2000]

    cases = list(ET.parse(junit).getroot().iter("testcase"))
    properties = [{p.get("name"): p.get("value") for p in case.iter("property")} for case in cases]
    assert properties and all("SEL-008" in (p["requirements"] or "").split() for p in properties)
    assert all(p.get("blamed") for p, case in zip(properties, cases, strict=True) if case.find("failure") is not None)
    # run from outside the rootdir, the node ids and the classnames name the module in the package's folder
    assert failing and all(nodeid.startswith("conformance/test_selection.py::") for nodeid in failing)
    assert {case.get("classname") for case in cases} == {"conformance.test_selection"}


@pytest.mark.requirement("ADP-022")
def test_a_run_whose_only_failures_are_expected_exits_0_and_says_so(tmp_path: Path, run_suite: RunSuite) -> None:
    listing = tmp_path / "gaps.yaml"
    listing.write_text(
        "expected_failures:\n  - requirement: SEL-008\n    reason: no fallback yet\n    link: https://tracker.invalid/7\n",
        encoding="utf-8",
    )
    summary = tmp_path / "summary.md"
    done = run_suite(
        "-q", "--requirement=SEL-008", "--pyargs", "conformance.test_selection", f"--expected-failures={listing}",
        f"--conformance-summary={summary}", "--docs-url=https://docs.invalid/v1/contract.md",
        impl="bad_no_text_fallback", importable=KNOWN_BAD, report=True,
    )  # fmt: skip
    assert done.code == 0, done.tail
    _valid(done.report)
    [sel008] = [r for r in done.report["requirements"] if r["id"] == "SEL-008"]
    assert sel008["status"] == "expected-failure"
    assert sel008["expected"] == {
        "reason": "no fallback yet",
        "link": "https://tracker.invalid/7",
        "entry": f"{listing}:2",
    }
    text = summary.read_text(encoding="utf-8")
    assert "conforms, with known gaps listed as expected failures" in text and "**violat" not in text
    assert "| [SEL-008](https://docs.invalid/v1/contract/selection.md#SEL-008) |" in text
    assert "[https://tracker.invalid/7]" in text


def test_a_usage_error_run_still_writes_its_report_and_summary(tmp_path: Path, run_suite: RunSuite) -> None:
    report, summary = tmp_path / "r.json", tmp_path / "s.md"
    done = run_suite(
        "-q", f"--conformance-report={report}", f"--conformance-summary={summary}", "--pyargs",
        "conformance.test_selection", impl="no_such_module_here",
    )  # fmt: skip
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    data = json.loads(report.read_text(encoding="utf-8"))
    _valid(data)
    assert (
        data["run"]["verdict"] == "usage-error" and "cannot import module 'no_such_module_here'" in data["run"]["error"]
    )
    assert "**usage error**" in summary.read_text(encoding="utf-8")


def test_an_unknown_requirement_option_writes_a_usage_error_report(tmp_path: Path, run_suite: RunSuite) -> None:
    report = tmp_path / "r.json"
    done = run_suite(
        "-q", f"--conformance-report={report}", "--requirement=SEL-999", "--pyargs", "conformance.test_selection"
    )
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    data = json.loads(report.read_text(encoding="utf-8"))
    _valid(data)
    assert data["run"]["verdict"] == "usage-error" and "SEL-999" in data["run"]["error"]


def test_node_ids_of_an_installed_suite_can_be_pasted_back(tmp_path: Path, run_suite: RunSuite) -> None:
    listed = run_suite("--collect-only", "-q", "--pyargs", "conformance.test_results", "-k", "render_vector")
    ids = [line for line in listed.out.splitlines() if "::" in line]
    first = ids[0]
    assert first.startswith("conformance/test_results.py::"), "relative to the package's folder, on every machine"
    again = run_suite("-q", first)
    assert again.code == 0 and "1 passed" in again.out, again.tail
    rest = run_suite("-q", "--pyargs", "conformance.test_results", "-k", "render_vector", "--deselect", first)
    assert f"{len(ids) - 1} passed" in rest.out, rest.tail


@pytest.mark.requirement("ADP-022")
def test_the_report_speaks_the_spec_statuses() -> None:
    """The statuses the report and its schema use are vocabulary report_status, in its order."""
    spec = load_spec()
    assert tuple(spec.vocabulary("adapter-protocol.report_status").values) == STATUSES
    schema = json.loads((spec.root / "schema" / "report.json").read_text(encoding="utf-8"))
    assert tuple(schema["properties"]["summary"]["required"]) == STATUSES
    status = schema["properties"]["requirements"]["items"]["properties"]["status"]
    assert tuple(status["enum"]) == STATUSES
