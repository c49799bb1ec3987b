"""docs/examples.md: what the lines look like. Every product × stage × category as the exact
text of the surface it appears in, computed from the spec's tables (diagnostic.yaml's field
order and prefixes, the products' stages, the Codex variants' wire examples) and checked
against the grammar before it is written; then the golden renderings the spec fixes.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from conformance.areas.diagnostic.grammar import roots
from conformance.areas.diagnostic.oracle import HTTP_STATUS_VARIANTS, expected_fields, products
from conformance.docs.pages import GENERATED, bullet, finish, row_block
from conformance.docs.text import Site, cell, code, to_json, wrap

PAGE = PurePosixPath("examples.md")
HEAD = "Product subagent failure ("  # the frame of table failure_line_fields' description
# Names a table of background renderings carries (issue 13: Job outcome, job_output, notice).
BACKGROUND_WORDS = ("job", "background", "notice")


class ExampleError(ValueError):
    """A computed example is not a sentence of the grammar: the spec's tables disagree."""


def failure_line(spec: Any, product: str, facts: dict[str, Any]) -> str:
    fields = expected_fields(spec, product, facts)
    return HEAD + "; ".join(f"{label}: {value}" for label, value in fields) + ")"


def typical_status(spec: Any, category: str) -> int | None:
    """The HTTP status of the variant's wire example in codex.variants, if it has one."""
    if category not in spec.vocabulary(HTTP_STATUS_VARIANTS).values:
        return None
    for row in spec.table("codex", "variants").rows:
        wire = row["wire"]
        if row["variant"] == category and isinstance(wire, dict):
            detail: dict[str, Any] = next(iter(wire.values()), {})
            status = detail.get("httpStatusCode")
            return status if isinstance(status, int) and not isinstance(status, bool) else None
    return None


def _lines(site: Site) -> list[str]:
    spec = site.spec
    grammar = roots(spec)
    out: list[str] = []
    for product in products(spec):
        stages = spec.table(product.area, "stages")
        out += [f"## {product.label}", ""]
        out += wrap(
            f"Stages from [{stages.title}]({site.table_href(PAGE, product.area, 'stages')}); the text "
            f"of a start() or dispose() rejection is the failure line behind `{product.error_prefix}`. "
            "An observed exit code or signal is appended to any of them (see the golden lines below)."
        )
        out += ["", "| stage | surfaces in | category | exact text |", "|---|---|---|---|"]
        for row in stages.rows:
            surface = next(s for s in ("run-result", "dispose-rejection", "start-rejection") if s in row["surfaces_in"])
            for category in row["categories"]:
                facts: dict[str, Any] = {"stage": row["stage"], "category": category}
                status = typical_status(spec, category) if product.http_status else None
                if status is not None:
                    facts["httpStatus"] = status
                text = failure_line(spec, product.label, facts)
                if surface != "run-result":
                    text = product.error_prefix + text
                if not grammar[(product.label, surface)].matches(text):
                    raise ExampleError(f"{product.label} {row['stage']}/{category}: {text!r} is not a {surface}")
                surfaces = ", ".join(row["surfaces_in"])
                out.append(f"| {code(row['stage'])} | {surfaces} | {code(category)} | {cell(code(text))} |")
        out.append("")
    return out


def _golden_lines(site: Site) -> list[str]:
    table = site.spec.table("diagnostic", "line_vectors")
    out = ["## Golden lines", ""]
    out += wrap(
        f"Every vector of [{table.title}]({site.table_href(PAGE, 'diagnostic', 'line_vectors')}), "
        "with its exact expected text (a `\\n` is the newline between a failure line and its "
        "permission line)."
    ) + [""]
    for index, row in enumerate(table.rows):
        shown = site.value(
            PAGE, table, table.columns[-1], row["expected"], ("tables", table.name, "rows", index, "expected")
        )
        out += bullet(f"{code(row['kind'])} {code(row['name'])} ({site.ids(PAGE, row['covers'])}): {shown}")
    return [*out, ""]


def _foreground(site: Site) -> list[str]:
    spec = site.spec
    grammar = roots(spec)
    table = spec.table("results", "render_vectors")
    out = ["## The foreground rendering of a failure", ""]
    out += wrap(
        "What the parent agent reads as the tool result of a failed child (`render_tool_result`), "
        f"from the vectors of [{table.title}]({site.table_href(PAGE, 'results', 'render_vectors')}) whose "
        "result carries a product failure line:"
    ) + [""]
    for index, row in enumerate(table.rows):
        diagnostic = row["result"].get("diagnostic")
        if not any(grammar[(p.label, "run-result")].matches(diagnostic or "") for p in products(spec)):
            continue
        out += [f"### {row['name']}", "", *site.prose(PAGE, row["description"]), ""]
        out += ["The result:", "", "```json", to_json(row["result"]), "```", ""]
        expected = row["expected"]
        out += [
            f"The tool result: `isError` is `{to_json(expected['isError'])}` and the text is",
            "",
            "```text",
            expected["text"],
            "```",
            "",
        ]
        out += [
            f"(as a JSON string: {site.exact(PAGE, to_json(expected['text']), 'results.yaml', ('tables', table.name, 'rows', index, 'expected'))}; "  # noqa: E501
            f"{site.ids(PAGE, row['covers'])})",
            "",
        ]
    return out


def _background(site: Site) -> list[str]:
    out = ["## The background rendering of a failure", ""]
    found = [
        (area, table)
        for area in site.spec.areas.values()
        for table in area.tables.values()
        if any(word in table.name or word in area.name for word in BACKGROUND_WORDS)
    ]
    if not found:
        return [
            *out,
            *wrap(
                "The spec has no background rendering yet: no area or table of spec/ is named for a Job "
                "outcome, `job_output` or a continuable notice (a name containing "
                + ", ".join(code(w) for w in BACKGROUND_WORDS)
                + "). When one is added, its rows "
                "are shown here."
            ),
            "",
        ]
    for area, table in found:
        href = site.table_href(PAGE, area.name, table.name)
        out += [f"### {table.title}", "", *wrap(f"From [{table.name}]({href})."), ""]
        for index in range(len(table.rows)):
            out += row_block(site, PAGE, table, index, f"**{cell(str(table.rows[index].get('name', index + 1)))}**")
    return out


def render_examples(site: Site) -> str:
    out = ["# What the lines look like", "", GENERATED, ""]
    out += wrap(
        "[The contract](contract.md) › Examples. The exact text a product provider writes for each "
        "stage and category it can fail with, computed from the spec's tables and checked against "
        "the grammar ([DIA-018](contract/diagnostic.md#DIA-018)) when this page is generated; then "
        "the golden lines and renderings the spec fixes, verbatim. Code spans show the text exactly; "
        "nothing is abbreviated."
    ) + [""]
    out += _lines(site) + _golden_lines(site) + _foreground(site) + _background(site)
    return finish(out)
