"""The conformance matrix: several implementations' reports as one requirement × implementation
table, with each column's provenance, in Markdown and as a static HTML page with filters."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli import main
from conformance.spec.resources import fixtures_dir
from conformance.verdict.matrix import SYMBOLS
from tests.conftest import RunSuite


def reports(tmp_path: Path, run_suite: RunSuite) -> list[Path]:
    """A conforming run and a rejected one, of the selection tier."""
    paths = []
    for impl in ("reference_impl", "bad_no_text_fallback"):
        path = tmp_path / f"{impl}.json"
        run_suite(
            "-q", "--pyargs", "conformance.test_selection", "-k", "golden_vector", f"--conformance-report={path}",
            impl=impl, importable=[fixtures_dir() / "known_bad"],
        )  # fmt: skip
        paths.append(path)
    return paths


def test_the_matrix_puts_each_report_in_a_column(tmp_path: Path, run_suite: RunSuite, capsys: object) -> None:
    good, bad = reports(tmp_path, run_suite)
    out_md, out_html = tmp_path / "matrix.md", tmp_path / "matrix.html"
    assert main(["matrix", str(good), str(bad), "--markdown", str(out_md), "--html", str(out_html)]) == 0
    text = out_md.read_text(encoding="utf-8")
    [row] = [line for line in text.splitlines() if line.startswith("| [SEL-008]")]
    assert row.endswith(f"| {SYMBOLS['passed']} | {SYMBOLS['violated']} |"), row
    bad_run = json.loads(bad.read_text(encoding="utf-8"))["run"]
    assert f"- **bad_no_text_fallback**: impl bad_no_text_fallback; suite 0.1.0; spec 0.1.0; {bad_run['date']}" in text
    page = out_html.read_text(encoding="utf-8")
    assert '<tr id="row-SEL-008" data-area="selection" data-level="MUST" data-statuses="passed violated">' in page


def test_a_file_that_is_not_a_report_is_named(tmp_path: Path, capsys: object) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"suite": 1}', encoding="utf-8")
    assert main(["matrix", str(bogus)]) == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert f"subagent-conformance matrix: {bogus}: not a conformance report" in err
