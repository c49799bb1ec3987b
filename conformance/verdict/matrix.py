"""The conformance matrix: the reports of several implementations as one requirement ×
implementation table, with each column's provenance (suite, spec and implementation versions,
date, exit status) — Markdown for a pull request or a CI step summary, and a static HTML page
with filters by area, level and status and links into the contract document.

Statuses are words, styled by CSS on the page: no emoji, which shows as an empty box where no
emoji font is installed (a CI runner, a headless browser)."""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec import Spec, load_spec, schema_validator
from conformance.spec.links import requirement_url
from conformance.verdict.blame import printable
from conformance.verdict.summary import published_contract

LABELS = {
    "passed": "passed",
    "violated": "violated",
    "expected-failure": "expected failure",
    "not-met": "SHOULD not met",
    "not-testable": "not testable",
    "not-applicable": "not applicable",
    "absent": "not in report",
}


class MatrixError(ValueError):
    """A report cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Column:
    """One implementation: its report and where it came from."""

    file: str
    report: dict[str, Any]
    heading: str = ""  # the title, told apart from other columns' equal titles (see headings)

    @property
    def title(self) -> str:
        declaration = self.report["adapter"]["declaration"] or {}
        implementation = declaration.get("implementation")
        if implementation:
            return f"{implementation['name']} {implementation['version']}"
        return str(self.report["adapter"]["impl"])

    @property
    def provenance(self) -> str:
        run = self.report["run"]
        return (
            f"impl {self.report['adapter']['impl']}; suite {self.report['suite']['version']}; "
            f"spec {self.report['spec_version']}; {run['date']}; exit {run['exit_status']} ({run['verdict']})"
            + "".join(f"; {line}" for line in run.get("verified_versions", ()))
        )

    def status(self, rid: str) -> tuple[str, str]:
        for req in self.report["requirements"]:
            if req["id"] == rid:
                return req["status"], req["reason"]
        return "absent", "the report does not list this requirement (another spec version?)"


def load_reports(paths: list[Path], spec: Spec) -> list[Column]:
    """Read and validate each report (spec/schema/report.json); name the file of any bad one."""
    validator = schema_validator(spec.root, "report")
    columns = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MatrixError(f"{path}: cannot read a JSON report: {exc}") from None
        for error in validator.iter_errors(data):
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise MatrixError(f"{path}: not a conformance report: {where}: {error.message}")
        columns.append(Column(str(path), data))
    if not columns:
        raise MatrixError("give at least one report")
    return [dataclasses.replace(c, heading=h) for c, h in zip(columns, headings(columns), strict=True)]


def _claimed_products(column: Column) -> str:
    providers = (column.report["adapter"]["declaration"] or {}).get("providers", {})
    return ", ".join(f"{product} {version}" for product, version in sorted(providers.items())) or "no provider"


_DISTINCTIONS: list[Callable[[Column], str]] = [
    _claimed_products,
    lambda c: str(c.report["adapter"]["impl"]),
    lambda c: str(c.report["run"]["date"]),
    lambda c: c.file,
]


def headings(columns: list[Column]) -> list[str]:
    """Each column's title; columns of one implementation and version (two runs, or two product
    versions claimed) are told apart by the first of the claimed product versions, the adapter,
    the run's date and the report file that differs between all of them, else by their position."""
    titles = [c.title for c in columns]
    for title in sorted(set(titles)):
        same = [i for i, t in enumerate(titles) if t == title]
        if len(same) < 2:
            continue
        for distinction in _DISTINCTIONS:
            extra = [distinction(columns[i]) for i in same]
            if len(set(extra)) == len(same):
                break
        else:
            extra = [f"#{n}" for n in range(1, len(same) + 1)]
        for i, more in zip(same, extra, strict=True):
            titles[i] = f"{title} ({more})"
    return titles


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _rows(spec: Spec) -> list[tuple[str, str, str, str]]:
    return [(req.id, req.area, req.level, req.title) for req in spec.requirements()]


def markdown_status(status: str) -> str:
    """A status in a Markdown cell: its words, a violation in bold."""
    return f"**{LABELS[status]}**" if status == "violated" else LABELS[status]


def markdown(columns: list[Column], spec: Spec, docs: str | None = None) -> str:
    docs = docs or published_contract()
    lines = [
        f"## Conformance matrix: {len(columns)} implementation(s), spec {spec.version}",
        "",
        *(f"- **{c.heading or c.title}**: {c.provenance}" for c in columns),
        "",
        "| requirement | level | title | " + " | ".join(_cell(c.heading or c.title) for c in columns) + " |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for rid, _area, level, title in _rows(spec):
        cells = " | ".join(markdown_status(c.status(rid)[0]) for c in columns)
        cell_title = title.replace("|", "\\|")
        lines.append(f"| [{rid}]({requirement_url(rid, docs)}) | {level} | {cell_title} | {cells} |")
    return "\n".join(lines) + "\n"


_SCRIPT = """
const filters = ['area', 'level', 'status'].map(name => document.getElementById('filter-' + name));
function apply() {
  const [area, level, status] = filters.map(f => f.value);
  let shown = 0;
  for (const row of document.querySelectorAll('tbody tr')) {
    const statuses = row.dataset.statuses.split(' ');
    const visible = (!area || row.dataset.area === area) && (!level || row.dataset.level === level)
      && (!status || statuses.includes(status));
    row.hidden = !visible;
    if (visible) shown += 1;
  }
  document.getElementById('shown').textContent = String(shown);
}
filters.forEach(f => f.addEventListener('change', apply));
apply();
"""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
thead th { position: sticky; top: 0; background: #f6f6f6; }
td.passed { background: #e8f5e9; color: #1b5e20; }
td.violated { background: #ffebee; color: #b71c1c; font-weight: bold; }
td.expected-failure { background: #fff8e1; color: #7a4f01; } td.not-met { background: #f3e5f5; }
td.not-testable, td.not-applicable, td.absent { color: #666; font-style: italic; }
label { margin-right: 1rem; }
"""


def html_page(columns: list[Column], spec: Spec, docs: str | None = None) -> str:
    """A self-contained page (no external resources), its filters in a few lines of script."""
    docs = docs or published_contract()
    esc = html.escape
    areas = sorted({area for _, area, _, _ in _rows(spec)})

    def options(name: str, values: list[str]) -> str:
        items = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        return f'<label>{name} <select id="filter-{name}"><option value="">all</option>{items}</select></label>'

    head = "".join(f'<th title="{esc(c.provenance)}">{esc(c.heading or c.title)}</th>' for c in columns)
    body = []
    for rid, area, level, title in _rows(spec):
        statuses = [c.status(rid) for c in columns]
        cells = "".join(f'<td class="{s}" title="{esc(reason)}">{esc(LABELS[s])}</td>' for s, reason in statuses)
        body.append(
            f'<tr id="row-{rid}" data-area="{esc(area)}" data-level="{level}" '
            f'data-statuses="{" ".join(s for s, _ in statuses)}">'
            f'<td><a href="{esc(requirement_url(rid, docs))}">{rid}</a></td><td>{esc(area)}</td><td>{level}</td>'
            f"<td>{esc(title)}</td>{cells}</tr>"
        )
    provenance = "".join(f"<li><strong>{esc(c.heading or c.title)}</strong>: {esc(c.provenance)}</li>" for c in columns)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Conformance matrix, spec {esc(spec.version)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Subagent result contract: conformance matrix</h1><p>Spec {esc(spec.version)}; "
        f"{len(columns)} implementation(s):</p><ul>{provenance}</ul>"
        f"<p>{options('area', areas)}{options('level', ['MUST', 'SHOULD'])}"
        f"{options('status', [s for s in LABELS if s != 'absent'])}"
        f' <span id="shown"></span> requirement(s) shown</p>'
        f"<table><thead><tr><th>requirement</th><th>area</th><th>level</th><th>title</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table><script>{_SCRIPT}</script></body></html>\n"
    )


def render(paths: list[Path], markdown_out: Path | None, html_out: Path | None, docs: str | None = None) -> str:
    """Write the outputs asked for; return the Markdown (printed when no output file is given).
    Requirement IDs link into the contract whose index is ``docs`` (default: the shipped one)."""
    spec = load_spec()
    columns = load_reports(paths, spec)
    text = printable(markdown(columns, spec, docs))
    if markdown_out is not None:
        markdown_out.parent.mkdir(parents=True, exist_ok=True)
        markdown_out.write_text(text, encoding="utf-8")
    if html_out is not None:
        html_out.parent.mkdir(parents=True, exist_ok=True)
        html_out.write_text(printable(html_page(columns, spec, docs)), encoding="utf-8")
    return text
