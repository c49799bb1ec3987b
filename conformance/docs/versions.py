"""What differs between the shipped versions of a product, on its area's page: a line under the
summary naming them, and a section with a table of the versions and, per version, the union
members it adds with each one's mapping row, its catch-all member, the rows it adds to other
tables, what its wire does differently, and each decision with its sources. All of it is read
from the area's ``versions`` (spec/codex.yaml, spec/claude-code.yaml); the vocabularies and
tables above it on the page are the base version's.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from conformance.docs.text import Site, bullet, cell, code, to_json, wrap
from conformance.spec import Area, ProductVersion, Table

GATE = "subagent-conformance upgrade-check --product {area} --version X"


def _anchor(version: str) -> str:
    return f"version-{version}"


def _claim(area: Area, version: str) -> str:
    return code(json.dumps({"providers": {area.name: version}}))


def versions_line(site: Site, page: PurePosixPath, area: Area) -> list[str]:
    """The sentence under the summary: the package, its shipped versions, how to claim one."""
    package = (area.product or {}).get("package", area.name)
    items = []
    for v in area.versions:
        notes = [f"product {v.product_version}"] * bool(v.product_version) + ["the base"] * v.base
        items.append(f"[{v.version}](#{_anchor(v.version)})" + (f" ({'; '.join(notes)})" if notes else ""))
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return wrap(
        f"Ships `{package}` {listed}. An adapter claims one ({_claim(area, area.versions[-1].version)}) and "
        f"every tier tests it at that version; the vocabularies and tables below are the base version's, "
        f"and [Versions](#versions) shows what each later one changes."
    )


def _member_rows(area: Area, entry: ProductVersion) -> dict[str, list[tuple[Table, int, dict[str, Any]]]]:
    """The rows an entry adds, by the member each one maps (a cell naming an added member), or
    under "" for a row that maps none (a golden vector of a wire difference)."""
    adds = list(entry.union.get("adds", ()))
    found: dict[str, list[tuple[Table, int, dict[str, Any]]]] = {}
    for name, rows in entry.rows.items():
        table = area.tables[name]
        for index, row in enumerate(rows):
            member = next((str(v) for v in row.values() if isinstance(v, str) and v in adds), "")
            found.setdefault(member, []).append((table, index, row))
    return found


def _row_text(
    site: Site, page: PurePosixPath, area: Area, at: int, table: Table, index: int, row: dict[str, Any], skip: str = ""
) -> str:
    """A row as ``column: value`` pairs, values shown as the table shows them."""
    path = ("versions", at, "rows", table.name, index)
    cells = [
        f"{c.name}: {site.value(page, table, c, row[c.name], (*path, c.name))}"
        for c in table.columns
        if c.name in row and c.name != skip
    ]
    return " · ".join(cells)


def _summary(area: Area) -> list[str]:
    out = ["| version | union | rows added | wire differences | decisions |", "|---|---|---|---|---|"]
    for entry in area.versions:
        adds = entry.union.get("adds", ())
        union = "the base union" if entry.base else (f"+{len(adds)} members" if adds else "unchanged")
        if "catch_all" in entry.union:
            union += ", a catch-all member"
        rows = ", ".join(f"{name}: {len(rows)}" for name, rows in entry.rows.items()) or "—"
        wire = ", ".join(code(key) for key in entry.wire) or "—"
        label = f"[{entry.version}](#{_anchor(entry.version)})" + (" (base)" if entry.base else "")
        out.append(f"| {label} | {union} | {cell(rows)} | {cell(wire)} | {len(entry.decisions) or '—'} |")
    return [*out, ""]


def _entry(site: Site, page: PurePosixPath, area: Area, at: int, entry: ProductVersion) -> list[str]:
    heading = entry.version + (" (base)" if entry.base else "")
    out = [f'<a id="{_anchor(entry.version)}"></a>', "", f"### {heading}", ""]
    if entry.product_version:
        out += [f"Drives the product at {entry.product_version}.", ""]
    if entry.base:
        out += wrap(
            f"Its union and mapping are the vocabularies and tables above. Claim it: {_claim(area, entry.version)}."
        )
        out.append("")
    else:
        out += wrap(f"A delta over the version before it. Claim it: {_claim(area, entry.version)}.") + [""]
    union = entry.union
    rows = _member_rows(area, entry)
    adds = [str(m) for m in union.get("adds", ())]
    if adds:
        joins = ", ".join(f"[{code(v)}](#vocab-{v})" for v in union.get("into", ()))
        leaves = ", ".join(f"[{code(v)}](#vocab-{v})" for v in union.get("out_of", ()))
        cells = "; ".join(
            f"column {code(c['column'])} of the [{c['table']}](#table-{c['table']}) row whose "
            + " and ".join(f"{code(k)} is {code(str(v))}" for k, v in c["where"].items())
            for c in union.get("cells", ())
        )
        out += wrap(
            f"Its union adds {len(adds)} members; they join {joins}"
            + (f" and leave {leaves}" if leaves else "")
            + (f"; they are added to {cells}" if cells else "")
            + "."
        )
        out += ["", "| member | meaning | mapping row |", "|---|---|---|"]
        docs = union.get("docs", {})
        for member in adds:
            mapped = [
                f"[{t.name}](#table-{t.name}): "
                + _row_text(site, page, area, at, t, i, r, _member_column(t, r, member))
                for t, i, r in rows.get(member, [])
            ]
            meaning = site.link_ids(page, docs.get(member, ""))
            out.append(f"| {code(member)} | {cell(meaning) or '—'} | {cell('; '.join(mapped)) or '—'} |")
        out.append("")
    if "catch_all" in union:
        schema = to_json(union["catch_all"]["schema"])
        out += wrap(
            f"Its union has a catch-all member {code(schema)} (it names no variant): a value only it matches is "
            f"category {code(str(union['catch_all']['category']))}."
        ) + [""]
    if rows.get(""):
        out += ["Rows it adds to other tables:", ""]
        for table, index, row in rows[""]:
            out += bullet(f"[{table.name}](#table-{table.name}): {_row_text(site, page, area, at, table, index, row)}")
        out.append("")
    if entry.wire:
        out += [
            "What its wire does " + ("(the fakes speak it):" if entry.base else "differently (the fakes speak it):"),
            "",
        ]
        for key, value in entry.wire.items():
            out += bullet(f"{code(key)}: {site.exact(page, to_json(value), area.file, ('versions', at, 'wire', key))}")
        out.append("")
    if entry.decisions:
        out += ["Decisions:", ""]
        for decision in entry.decisions:
            sources = "; ".join(site.source(page, s) for s in decision.get("sources", ()))
            text = f"**{decision['about']}**: {' '.join(str(decision['decision']).split())} Sources: {sources}."
            out += bullet(site.link_ids(page, text))
        out.append("")
    if entry.sources:
        out += ["Sources:", ""]
        for source in entry.sources:
            out += bullet(site.link_ids(page, site.source(page, source)))
        out.append("")
    return out


def _member_column(table: Table, row: dict[str, Any], member: str) -> str:
    """The column of a mapping row that names the member (shown once, in the member column)."""
    return next((c.name for c in table.columns if row.get(c.name) == member and c.type == "vocab"), "")


def render_versions(site: Site, page: PurePosixPath, area: Area) -> list[str]:
    """The area's ``## Versions`` section."""
    out = ['<a id="versions"></a>', "", "## Versions", ""]
    out += wrap(
        "The versions of the product this spec ships. The first is the base: its union and mapping are the "
        "vocabularies and tables above. Each later one is a delta over the one before it: the union members it "
        "adds (the vocabularies they join and leave), the mapping row of each, what its wire does differently, "
        "and the decision taken for each, with its sources. An adapter claims one version; the suite tests it "
        f"at that version. For any other, `{GATE.format(area=area.name)}` compares it with the nearest shipped "
        "version and drafts its entry (README: the upgrade gate)."
    ) + [""]
    out += _summary(area)
    for at, entry in enumerate(area.versions):
        out += _entry(site, page, area, at, entry)
    return out
