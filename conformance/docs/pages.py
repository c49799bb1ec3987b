"""The contract pages: one per area (its prose, then each requirement with its vectors and
tests, then its tables and vocabularies), the seed map and the coverage appendix.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from conformance.docs.testmap import TestMap
from conformance.docs.text import Site, cell, code, wrap
from conformance.docs.text import bullet as bullet  # re-exported: the other pages import it from here
from conformance.docs.versions import render_versions, versions_line
from conformance.spec import Area, Requirement, Table, Vocabulary

GENERATED = "<!-- Generated from spec/ by `subagent-conformance docs`; do not edit. CI fails when it drifts. -->"
_TABLE_ROW_LIMIT = 400  # characters: a table with a longer row renders each row as a block
VECTOR_COVERS = "covers"  # the column in which a golden vector names the requirements it illustrates


def is_vector_table(table: Table) -> bool:
    """Golden vectors name the requirements they illustrate in a ``covers`` column; a rule table's
    ``requirement`` (or ``rule``, ``breaks``) column names the rule a row states, and the table
    is shown whole."""
    return any(c.type == "requirements" and c.name == VECTOR_COVERS for c in table.columns)


def vectors_of(area: Area, rid: str) -> list[tuple[Table, int]]:
    """The vectors of an area that name ``rid``, table by table, in file order."""
    found = []
    for table in area.tables.values():
        if not is_vector_table(table):
            continue
        for index, row in enumerate(table.rows):
            if rid in (row.get(VECTOR_COVERS) or ()):
                found.append((table, index))
    return found


def row_label(table: Table, index: int) -> str:
    """A row's name: its ``name`` cell, else its first cell, else its number."""
    row = table.rows[index]
    if "name" in row:
        return str(row["name"])
    first = table.columns[0].name
    return str(row.get(first, index + 1))


_SHORT = 60  # characters: cells this short share one line of a row block


def row_block(
    site: Site, page: PurePosixPath, table: Table, index: int, heading: str, skip: tuple[str, ...] = ()
) -> list[str]:
    """One row as a short list: short cells on one line, each longer one on its own, values
    past the inline limit linked to their line."""
    row = table.rows[index]
    short: list[str] = []
    long: list[str] = []
    for column in table.columns:
        if column.name not in row or column.name in ("name", "description", *skip):
            continue
        shown = site.value(page, table, column, row[column.name], ("tables", table.name, "rows", index, column.name))
        (short if len(shown) <= _SHORT else long).append(f"{column.name}: {shown}")
    out = [*wrap(heading), ""]
    if short:
        out += bullet(" · ".join(short))
    for item in long:
        out += bullet(item)
    return [*out, ""]


def render_table(site: Site, page: PurePosixPath, table: Table) -> list[str]:
    area = site.spec.areas[table.area]
    at = site.line(area.file, ("tables", table.name))
    where = f"[{site.spec_path(area.file)}:{at}]({site.file_href(page, site.spec_path(area.file), at)})"
    out = [f'<a id="table-{table.name}"></a>', "", f"### {table.title} (`{table.name}`)", ""]
    if table.description:
        out += site.prose(page, table.description) + [""]
    stated = list(table.requirements) + [
        r.id for r in area.requirements if table.name in r.tables and r.id not in table.requirements
    ]
    out += wrap(f"Stated by {site.ids(page, stated)}; {len(table.rows)} rows, in {where}.") + [""]
    if is_vector_table(table):
        out += ["| vector | illustrates | line |", "|---|---|---|"]
        for index, row in enumerate(table.rows):
            line = site.line(area.file, ("tables", table.name, "rows", index))
            rids = list(row.get(VECTOR_COVERS) or ())
            first = f"[{cell(row_label(table, index))}]({site.requirement_href(page, rids[0])})"
            src = f"[{line}]({site.file_href(page, site.spec_path(area.file), line)})"
            out.append(f"| {first} | {site.ids(page, rids)} | {src} |")
        return [*out, ""]
    header = []
    for column in table.columns:
        title = column.title or column.name
        if column.vocab:
            title += f" ([{column.vocab.rpartition('.')[2]}]({site.vocab_href(page, column.vocab, table.area)}))"
        header.append(cell(title))
    rows = [
        [
            cell(site.value(page, table, c, row[c.name], ("tables", table.name, "rows", i, c.name)))
            if c.name in row
            else "—"
            for c in table.columns
        ]
        for i, row in enumerate(table.rows)
    ]
    lines = ["| " + " | ".join(cells) + " |" for cells in rows]
    if max((len(line) for line in lines), default=0) <= _TABLE_ROW_LIMIT:
        return [*out, "| " + " | ".join(header) + " |", "|" + "---|" * len(header), *lines, ""]
    for index in range(len(table.rows)):
        out += row_block(site, page, table, index, f"**{cell(row_label(table, index))}**")
    return out


def render_vocabulary(site: Site, page: PurePosixPath, vocab: Vocabulary) -> list[str]:
    out = [f'<a id="vocab-{vocab.name}"></a>', "", f"### {vocab.title} (`{vocab.area}.{vocab.name}`)", ""]
    if vocab.description:
        out += site.prose(page, vocab.description) + [""]
    if vocab.docs:
        out += ["| value | meaning |", "|---|---|"]
        out += [
            f"| {cell(code(str(v)))} | {cell(site.link_ids(page, vocab.docs.get(str(v), '')))} |" for v in vocab.values
        ]
    else:
        out += wrap(", ".join(code(str(v)) for v in vocab.values))
    return [*out, ""]


def render_requirement(site: Site, page: PurePosixPath, req: Requirement, tests: TestMap) -> list[str]:
    area = site.spec.areas[req.area]
    where = f"[{site.spec_path(area.file)}:{req.line}]({site.file_href(page, site.spec_path(area.file), req.line)})"
    out = [f'<a id="{req.id}"></a>', "", f"### [{req.id}](#{req.id}) — {req.title}", ""]
    out += site.prose(page, f"**{req.level}.** {req.text}") + [""]
    if req.tables:
        links = ", ".join(f"[{area.tables[t].title}]({site.table_href(page, req.area, t)})" for t in req.tables)
        out += wrap(f"Tables: {links}.") + [""]
    if req.deviation:
        out += site.prose(page, f"*Deviation from upstream:* {req.deviation}") + [""]
    if req.excluded:
        out += site.prose(page, f"*Excluded from testing:* {req.excluded}") + [""]
    decisions = [s for s in req.sources if "decision" in s]
    for source in decisions:
        out += site.prose(
            page, f"*Decision:* {source['decision']}" + (f" ({source['note']})" if "note" in source else "")
        ) + [""]
    others = [s for s in req.sources if "decision" not in s]
    if others:
        out += ["Sources:", ""]
        for source in others:
            out += bullet(site.link_ids(page, site.source(page, source)))
        out.append("")
    for table, index in vectors_of(area, req.id):
        row = table.rows[index]
        line = site.line(area.file, ("tables", table.name, "rows", index))
        covers = [c.name for c in table.columns if c.type == "requirements"]
        others = [rid for name in covers for rid in row.get(name) or () if rid != req.id]
        heading = (
            f"Vector **{cell(row_label(table, index))}** ([{table.name}]"
            f"({site.table_href(page, req.area, table.name)}), "
            f"[line {line}]({site.file_href(page, site.spec_path(area.file), line)}))"
            + (f": {row['description']}" if row.get("description") else "")
            + (f" Also illustrates {site.ids(page, others)}." if others else "")
        )
        out += row_block(site, page, table, index, site.link_ids(page, heading), skip=tuple(covers))
    functions = tests.functions(req.id)
    if functions:
        out += ["Tests:", ""]
        for fn in functions:
            cases = f" ({fn.cases} cases)" if fn.cases > 1 else ""
            out.append(f"- [{fn.path}]({site.file_href(page, fn.path)}) {code(fn.name)}{cases}")
        out.append("")
    elif req.excluded is None:
        out += ["Tests: none collected.", ""]
    out += [f"Stated in {where}.", ""]
    return out


def render_area(site: Site, area: Area, tests: TestMap) -> str:
    page = site.area_page(area.name)
    out = [f"# {area.title}", "", GENERATED, ""]
    out += wrap(
        f"[The contract](../contract.md) › {area.title}. File `{site.spec_path(area.file)}`; "
        f"requirement IDs `{area.id_prefix}-nnn`."
    ) + [""]
    out += site.prose(page, area.summary) + [""]
    if area.versions:
        out += versions_line(site, page, area) + [""]
    out += ["Requirements:", ""]
    out += [f"- [{r.id}](#{r.id}) {r.level} — {r.title}" for r in area.requirements]
    out.append("")
    if area.tables:
        out += ["Tables:", "", *[f"- [{t.title}](#table-{t.name})" for t in area.tables.values()], ""]
    if area.vocabularies:
        out += ["Vocabularies:", "", *[f"- [{v.title}](#vocab-{v.name})" for v in area.vocabularies.values()], ""]
    if area.versions:
        out += ["Versions:", "", *[f"- [{v.version}](#version-{v.version})" for v in area.versions], ""]
    out += ["## Requirements", ""]
    for req in area.requirements:
        out += render_requirement(site, page, req, tests)
    if area.tables:
        out += ["## Tables", ""]
        for table in area.tables.values():
            out += render_table(site, page, table)
    if area.vocabularies:
        out += ["## Vocabularies", ""]
        for vocab in area.vocabularies.values():
            out += render_vocabulary(site, page, vocab)
    if area.versions:
        out += render_versions(site, page, area)
    return finish(out)


def finish(lines: list[str]) -> str:
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


def render_seeds(site: Site) -> str:
    page = PurePosixPath("contract") / "seeds.md"
    out = ["# Seed statements and the requirements that carry them", "", GENERATED, ""]
    out += wrap(
        "[The contract](../contract.md) › Seeds. Every statement of the seed notes "
        f"(`{site.spec_path('seeds')}/`), in order, with the requirements that carry it. A piece that "
        "states nothing to conform to (a heading, metadata) says why."
    ) + [""]
    for seed in site.spec.seeds:
        path = f"{site.spec_path('seeds')}/{seed.file}"
        out += [f"## {seed.title}", "", f"[{seed.file}]({site.file_href(page, path)})", ""]
        for n, st in enumerate(seed.statements, 1):
            carried = site.ids(page, st.requirements) if st.requirements else f"*informative:* {st.informative}"
            out += bullet(_literal_markdown(st.text), f"{n}. ")
            out += wrap(f"→ {carried}", indent=" " * len(f"{n}. ")) + [""]
    return finish(out)


def _literal_markdown(text: str) -> str:
    """A seed's words as words: no heading, link, emphasis or HTML of their own (code spans kept)."""
    parts = re.split(r"(`+[^`]+?`+)", text)
    escaped = "".join(p if p.startswith("`") else re.sub(r"([\\\[\]*_<>|])", r"\\\1", p) for p in parts)
    return "\\" + escaped if escaped.startswith(("#", "+", "-", ">")) else escaped


def render_coverage(site: Site, tests: TestMap) -> str:
    page = PurePosixPath("contract") / "coverage.md"
    out = ["# Coverage appendix", "", GENERATED, ""]
    out += wrap(
        "[The contract](../contract.md) › Coverage. Every requirement with the number of collected "
        "tests whose `requirement` marker names it (parametrized cases counted one by one), and the "
        "test functions they belong to. `subagent-conformance coverage` prints the same from a live "
        "collection."
    ) + [""]
    for area in site.spec.areas.values():
        out += [f"## {area.title}", "", "| requirement | level | tests | test functions |", "|---|---|---|---|"]
        for req in area.requirements:
            fns = tests.functions(req.id)
            count: Any = sum(fn.cases for fn in fns)
            if req.excluded is not None:
                count = "excluded"
            elif req.tested_by == "project":
                count = f"{count} (project tests)"
            names = ", ".join(code(fn.name) for fn in fns)
            out.append(f"| {site.ids(page, [req.id])} | {req.level} | {count} | {cell(names)} |")
        out.append("")
    return finish(out)
