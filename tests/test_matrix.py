"""The conformance matrix: several implementations' reports as one requirement × implementation
table, with each column's provenance, in Markdown and as a static HTML page with filters."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance.cli import main
from conformance.spec.resources import fixtures_dir
from conformance.verdict.matrix import markdown_status
from conformance.verdict.summary import published_contract
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
    assert row.endswith(f"| {markdown_status('passed')} | {markdown_status('violated')} |"), row
    bad_run = json.loads(bad.read_text(encoding="utf-8"))["run"]
    assert f"- **bad_no_text_fallback**: impl bad_no_text_fallback; suite 0.1.0; spec 0.1.0; {bad_run['date']}" in text
    page = out_html.read_text(encoding="utf-8")
    assert '<tr id="row-SEL-008" data-area="selection" data-level="MUST" data-statuses="passed violated">' in page
    # by default IDs link into the contract published with this version of the suite, as the summary's do
    contract = published_contract().removesuffix(".md")
    assert contract.startswith("https://") and "/blob/v" in contract, contract
    assert row.startswith(f"| [SEL-008]({contract}/selection.md#SEL-008) | MUST |"), row
    assert f'<a href="{contract}/selection.md#SEL-008">SEL-008</a>' in page
    assert "file://" not in text and "file://" not in page


def test_a_file_that_is_not_a_report_is_named(tmp_path: Path, capsys: object) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"suite": 1}', encoding="utf-8")
    assert main(["matrix", str(bogus)]) == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert f"subagent-conformance matrix: {bogus}: not a conformance report" in err


def _header(markdown_file: Path) -> list[str]:
    line = next(line for line in markdown_file.read_text(encoding="utf-8").splitlines() if line.startswith("| req"))
    return [cell.strip() for cell in line.strip("|").split("|")][3:]


def test_columns_of_one_implementation_are_told_apart(tmp_path: Path, run_suite: RunSuite) -> None:
    """Two reports of one implementation and version: told apart by the product versions they
    claim when those differ, else by the run's date, else by the report file."""
    report = tmp_path / "reference.json"
    run_suite(
        "-q", "--pyargs", "conformance.test_selection", "-k", "golden_vector and text-pieces",
        f"--conformance-report={report}", impl="reference_impl",
    )  # fmt: skip
    data = json.loads(report.read_text(encoding="utf-8"))
    data["adapter"]["declaration"]["implementation"] = {"name": "harness", "version": "1.0.0"}

    def variant(name: str, codex: str, date: str) -> str:
        copy = json.loads(json.dumps(data))
        copy["adapter"]["declaration"]["providers"]["codex"] = codex
        copy["run"]["date"] = date
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(copy), encoding="utf-8")
        return str(path)

    monday, tuesday = "2026-06-01T10:00:00+00:00", "2026-06-02T10:00:00+00:00"
    a, b = variant("a", "0.147.0", monday), variant("b", "0.148.0", monday)
    c, d = variant("c", "0.147.0", tuesday), variant("d", "0.147.0", monday)
    claude = data["adapter"]["declaration"]["providers"]["claude-code"]
    out = tmp_path / "matrix.md"
    for reports, expected in (
        ([a, b], [f"harness 1.0.0 (claude-code {claude}, codex {v})" for v in ("0.147.0", "0.148.0")]),
        ([a, c], [f"harness 1.0.0 ({date})" for date in (monday, tuesday)]),
        ([a, d], [f"harness 1.0.0 ({path})" for path in (a, d)]),
    ):
        assert main(["matrix", *reports, "--markdown", str(out), "--html", str(tmp_path / "m.html")]) == 0
        assert _header(out) == expected
        page = (tmp_path / "m.html").read_text(encoding="utf-8")
        assert all(f">{title}</th>" in page for title in expected)


EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f]")  # pictographs, dingbats, VS16


def test_statuses_are_words_without_emoji(tmp_path: Path, run_suite: RunSuite) -> None:
    """Statuses read without an emoji font: every status cell of the page is plain ASCII words, and
    no emoji or symbol-font character is on the page (tests/test_matrix_browser.py shows them drawn)."""
    good, bad = reports(tmp_path, run_suite)
    out_html = tmp_path / "matrix.html"
    assert main(["matrix", str(good), str(bad), "--html", str(out_html)]) == 0
    page = out_html.read_text(encoding="utf-8")
    assert not EMOJI.findall(page)
    cells = re.findall(r'<td class="([a-z-]+)" title="[^"]*">([^<]*)</td>', page)
    assert {status for status, _ in cells} >= {"passed", "violated"}
    assert all(text.isascii() and text.replace(" ", "").isalpha() for _, text in cells), set(cells)
