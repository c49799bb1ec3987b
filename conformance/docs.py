"""Render spec/ into docs/contract.md: the contract's documentation, generated, never edited."""

from __future__ import annotations

import json
from typing import Any

from conformance.spec import Area, Column, Requirement, Spec, Table

_WIDE = 100  # a row with a cell wider than this renders as a block, not a table row
SEEDS_TITLE = "Seed statements and the requirements that carry them"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render_text_recipe(recipe: Any) -> str:
    """A short readable form of a ``text`` cell: ``"x" × 4097``, ``A + B``, ``U+0009 U+000A``."""
    if isinstance(recipe, str):
        return _json(recipe)
    if "repeat" in recipe:
        inner = render_text_recipe(recipe["repeat"])
        return f"{inner} × {recipe['times']}" if " " not in inner else f"({inner}) × {recipe['times']}"
    if "concat" in recipe:
        return " + ".join(render_text_recipe(part) for part in recipe["concat"]) or '""'
    return " ".join(f"U+{cp:04X}" for cp in recipe["codepoints"])


def _cell(column: Column, value: Any) -> str:
    if value is None:
        return "null"
    if column.type == "text":
        return _code(render_text_recipe(value))
    if column.type == "requirements":
        return ", ".join(value)
    if column.type == "vocab" and column.many:
        return ", ".join(_code(str(v)) for v in value)
    if column.type in ("json", "boolean", "integer"):
        return _code(_json(value))
    return str(value).replace("\n", " ")


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def _render_table(area: Area, table: Table) -> list[str]:
    out = [f"#### {table.title} (`{table.name}`)", ""]
    if table.description:
        out += [" ".join(table.description.split()), ""]
    if table.requirements:
        out += [f"States: {', '.join(table.requirements)}.", ""]
    elided = False
    rows = []
    for row in table.rows:
        cells = []
        for column in table.columns:
            cell = _cell(column, row[column.name]) if column.name in row else "—"
            if column.type in ("json", "text") and len(cell) > _WIDE:
                cell, elided = "*(in the spec file)*", True
            cells.append(_escape(cell))
        rows.append("| " + " | ".join(cells) + " |")
    out.append("| " + " | ".join(_escape(c.title or c.name) for c in table.columns) + " |")
    out.append("|" + "---|" * len(table.columns))
    out += rows
    out.append("")
    if elided:
        out += [f"Values too long to show here are in `spec/{area.file}`, table `{table.name}`.", ""]
    return out


def _source(source: dict[str, str]) -> str:
    kind = next(k for k in ("seed", "upstream", "product", "decision") if k in source)
    text = f"{kind}: {_code(source[kind]) if kind != 'decision' else source[kind]}"
    return text + (f" ({source['note']})" if "note" in source else "")


def _render_requirement(req: Requirement) -> list[str]:
    out = [f"#### {req.id} — {req.title}", "", f"**{req.level}.** {' '.join(req.text.split())}", ""]
    if req.tables:
        out += [f"Tables: {', '.join(f'`{t}`' for t in req.tables)}.", ""]
    if req.deviation:
        out += [f"*Deviation from upstream:* {' '.join(req.deviation.split())}", ""]
    if req.excluded:
        out += [f"*Excluded from testing:* {' '.join(req.excluded.split())}", ""]
    if req.tested_by == "project":
        out += ["*Tested by the project's own tests* (`tests/`): it constrains the suite itself, not an adapter.", ""]
    out += ["Sources:", ""] + [f"- {_source(s)}" for s in req.sources] + [""]
    return out


def _render_area(area: Area) -> list[str]:
    out = [f"## {area.title}", "", f"File `spec/{area.file}`; requirement IDs `{area.id_prefix}-nnn`.", ""]
    out += [" ".join(area.summary.split()), ""]
    if area.locked:
        extra = f" (product {area.locked['product_version']})" if "product_version" in area.locked else ""
        out += [f"Locked to `{area.locked['package']}` {area.locked['version']}{extra}.", ""]
    if area.vocabularies:
        out += ["### Vocabularies", ""]
        for vocab in area.vocabularies.values():
            out += [f"#### {vocab.title} (`{area.name}.{vocab.name}`)", ""]
            if vocab.description:
                out += [" ".join(vocab.description.split()), ""]
            if vocab.docs:
                out += ["| value | meaning |", "|---|---|"]
                out += [f"| {_escape(_code(str(v)))} | {_escape(vocab.docs.get(str(v), ''))} |" for v in vocab.values]
            else:
                out.append(", ".join(_code(str(v)) for v in vocab.values))
            out.append("")
    if area.tables:
        out += ["### Tables", ""]
        for table in area.tables.values():
            out += _render_table(area, table)
    out += ["### Requirements", ""]
    for req in area.requirements:
        out += _render_requirement(req)
    return out


def _render_seeds(spec: Spec) -> list[str]:
    out = [
        f"## {SEEDS_TITLE}",
        "",
        "Every statement of the three seed notes (`spec/seeds/`), in order, with the requirement IDs that carry it.",
        "A piece that states nothing to conform to (a heading, metadata) says why.",
        "",
    ]
    for seed in spec.seeds:
        out += [f"### {seed.title} (`{seed.file}`)", "", "| # | statement | requirements |", "|---|---|---|"]
        for n, st in enumerate(seed.statements, 1):
            carried = ", ".join(st.requirements) if st.requirements else f"*informative:* {st.informative}"
            out.append(f"| {n} | {_escape(st.text)} | {_escape(carried)} |")
        out.append("")
    return out


def render_contract(spec: Spec) -> str:
    """The whole of docs/contract.md."""
    reqs = list(spec.requirements())
    out = [
        f"# {spec.title}",
        "",
        "<!-- Generated from spec/ by `subagent-conformance docs`; do not edit. CI fails when it drifts. -->",
        "",
        f"Spec version {spec.version}: {len(spec.areas)} areas, {len(reqs)} requirements "
        f"({sum(r.level == 'MUST' for r in reqs)} MUST, {sum(r.level == 'SHOULD' for r in reqs)} SHOULD, "
        f"{sum(r.excluded is not None for r in reqs)} excluded from testing).",
        "",
        "## Areas",
        "",
    ]
    out += [f"- [{a.title}](#{_anchor(a.title)}) — {a.id_prefix}" for a in spec.areas.values()]
    out += [
        f"- [{SEEDS_TITLE}](#{_anchor(SEEDS_TITLE)})",
        "",
    ]
    for area in spec.areas.values():
        out += _render_area(area)
    out += _render_seeds(spec)
    return "\n".join(out).rstrip("\n") + "\n"


def _anchor(title: str) -> str:
    keep = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -")
    return keep.replace(" ", "-")
