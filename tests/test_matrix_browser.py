"""The matrix page in a real browser: headless Chromium (the distribution's package) loads the
page built from the reference's and the Node.js adapter's reports without a console error, every
link resolves to a requirement anchor of the contract document, the filters work, and every status
cell is drawn in glyphs of the fonts at hand, an emoji font or none.

Needs Chromium and the Python Playwright driver (not dev dependencies: CI's matrix step installs
both and runs this module); elsewhere the module is skipped, saying so — except under CI, where a
missing browser is a failure, not a skip."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict.matrix import render
from tests.conftest import RunSuite

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if os.environ.get("CI") and CHROMIUM is None:
    raise RuntimeError("CI must install Debian's chromium for the matrix browser check (.ci/run)")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (CI's matrix step installs it)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (CI's matrix step installs it)"
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "contract.md"
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture
def page_file(tmp_path: Path, run_suite: RunSuite) -> Path:
    """The page CI rendered from its real reports ($SUBAGENT_CONFORMANCE_MATRIX_HTML), else one built
    here from the results tier's vectors against the reference and the Node.js adapter."""
    if given := os.environ.get("SUBAGENT_CONFORMANCE_MATRIX_HTML"):
        return Path(given)
    node = f"exec:node {fixtures_dir() / 'adapters' / 'node' / 'adapter.mjs'}"
    paths = []
    for name, impl in (("reference", "reference_impl"), ("node", node)):
        path = tmp_path / f"{name}.json"
        run_suite(
            "-q", "--pyargs", "conformance.test_results", "-k", "vector", f"--conformance-report={path}", impl=impl
        )
        assert path.exists(), f"no report from {impl}"
        paths.append(path)
    out = tmp_path / "matrix.html"
    render(paths, None, out, DOCS.as_uri())
    return out


def test_the_matrix_page_loads_links_and_filters(page_file: Path) -> None:
    spec = load_spec()
    # each requirement's anchor is on its area's page beside the index (conformance/spec/links.py)
    anchor_ids = {
        (page.resolve(), chunk.split('"', 1)[0])
        for page in (DOCS.parent / "contract").glob("*.md")
        for chunk in page.read_text(encoding="utf-8").split('id="')[1:]
    }
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page()
            problems: list[str] = []
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.goto(page_file.as_uri())
            assert not problems, problems

            hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
            assert len(hrefs) == sum(1 for _ in spec.requirements())
            for href in hrefs:
                url = urlparse(href)
                target = (Path(unquote(url.path)).resolve(), url.fragment)
                assert target in anchor_ids, f"link does not resolve: {href}"

            total = sum(1 for _ in spec.requirements())
            assert page.text_content("#shown") == str(total)
            page.select_option("#filter-area", "results")
            results = sum(1 for r in spec.requirements() if r.area == "results")
            assert page.text_content("#shown") == str(results)
            visible = page.eval_on_selector_all("tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.area)")
            assert set(visible) == {"results"} and len(visible) == results
            page.select_option("#filter-level", "SHOULD")
            page.select_option("#filter-area", "")
            should = sum(1 for r in spec.requirements() if r.level == "SHOULD")
            assert page.text_content("#shown") == str(should)
            page.select_option("#filter-level", "")
            page.select_option("#filter-status", "passed")
            passed = page.eval_on_selector_all("tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.statuses)")
            assert passed and all("passed" in s.split() for s in passed)
            assert not problems, problems
        finally:
            browser.close()


MISSING = "\u0378"  # an unassigned code point: no font has it, so it shows the box of a missing glyph
PROBE = """(font) => {
  const probe = document.createElement('div');
  probe.id = 'glyph-probe';
  probe.style.cssText = 'position:fixed;top:0;left:0;padding:2px;background:#fff;color:#000;white-space:pre;z-index:9';
  probe.style.font = font;
  document.body.append(probe);
}"""


def test_the_statuses_are_drawn_without_an_emoji_font(page_file: Path, tmp_path: Path) -> None:
    """A screenshot of each status's first cell shows ink (it differs from the cell with its text
    made transparent), and each character of the status, drawn alone in the cell's font, differs
    from the box Chromium draws for a character no installed font has — an emoji without an emoji
    font is that box (checked against two unassigned code points, which draw the same box)."""
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.screenshot(path=str(tmp_path / "matrix.png"), full_page=True)  # kept with the test's files
            statuses = page.eval_on_selector_all(
                "tbody td[class]", "cells => [...new Set(cells.map(c => c.className))]"
            )
            assert {"passed"} <= set(statuses), statuses
            for status in statuses:
                cell = page.locator(f"tbody td.{status}").first
                cell.scroll_into_view_if_needed()
                shown = cell.screenshot()
                cell.evaluate("c => { c.dataset.color = c.style.color; c.style.color = 'transparent'; }")
                blank = cell.screenshot()
                cell.evaluate("c => { c.style.color = c.dataset.color; }")
                text = cell.inner_text().strip()
                assert text and shown != blank, f"the {status} cell shows nothing"

                page.evaluate(PROBE, cell.evaluate("c => getComputedStyle(c).font"))
                probe = page.locator("#glyph-probe")

                def drawn(chars: str, probe: Any = probe) -> bytes:
                    probe.evaluate("(p, t) => { p.textContent = t; }", chars)
                    return bytes(probe.screenshot())

                missing = drawn(MISSING)
                assert drawn("\u0379") == missing, "two characters no font has draw the same box"
                boxed = sorted(ch for ch in set(text) - {" "} if drawn(ch) == missing)
                assert not boxed, f"the {status} cell {text!r} draws {boxed} as the box of a missing glyph"
                probe.evaluate("p => p.remove()")
        finally:
            browser.close()
