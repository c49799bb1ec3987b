"""docs/implementers-guide.md, from the template beside this module: its prose is written by
hand, its facts are not. A directive line is replaced by what the spec says:

- ``{{operation NAME}}``: the operation's row of adapter-protocol.operations;
- ``{{vector AREA TABLE NAME}}``: one golden vector, exactly, as a worked example;
- ``{{claims}}``: each claim key, what it means and the operations it makes required;
- ``{{process-only}}``: the requirements only a process driver can reach, counted and linked;
- a fenced block ```` ```pitfalls ````: the section's pitfalls as data (conformance/docs/pitfalls.py),
  each tied to the requirement it breaks and a golden vector that tells it apart.

Every requirement ID in the prose links to its anchor. A directive naming something the spec
does not have fails the rendering with the template's line, so the guide cannot drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.docs import pitfalls
from conformance.docs.pages import GENERATED, bullet, finish
from conformance.docs.pitfalls import Pitfall, PitfallError
from conformance.docs.testmap import TestMap
from conformance.docs.text import Site, code, text_recipe, to_json, wrap
from conformance.spec import Spec

PAGE = PurePosixPath("implementers-guide.md")
TEMPLATE = Path(__file__).with_name("implementers-guide.md")
_DIRECTIVE = re.compile(r"^\{\{(\S+)(?: (.*))?\}\}$")


class GuideError(ValueError):
    """The template names something the spec does not define."""


def _operation(site: Site, name: str) -> list[str]:
    table = site.spec.table("adapter-protocol", "operations")
    rows = [row for row in table.rows if row["operation"] == name]
    if not rows:
        raise KeyError(f"no operation {name!r} in adapter-protocol.operations")
    row = rows[0]
    schema = site.spec_path("schema/operations.json")
    out = [f"**{code(name)}**", ""]
    out += bullet(
        f"Tier {code(row['tier'])}; required when {site.link_ids(PAGE, row['applicable_when'])} "
        f"([operations]({site.table_href(PAGE, 'adapter-protocol', 'operations')}))."
    )
    for key in ("input", "output"):
        ref = row[f"{key}_schema"].partition("#")[2]
        out += bullet(
            f"{key.capitalize()}: {site.link_ids(PAGE, row[key])} "
            f"(schema [{ref.rpartition('/')[2]}]({site.file_href(PAGE, schema)}))"
        )
    return [*out, ""]


def _vector(site: Site, area: str, table_name: str, name: str) -> list[str]:
    """A worked example: the whole vector, its JSON values pretty-printed (a guide's examples
    are chosen short, so nothing is elided)."""
    table = site.spec.table(area, table_name)
    index = next((i for i, row in enumerate(table.rows) if row.get("name") == name), None)
    if index is None:
        raise KeyError(f"no vector {name!r} in {area}.{table_name}")
    row = table.rows[index]
    line = site.line(site.spec.areas[area].file, ("tables", table_name, "rows", index))
    src = site.spec_path(site.spec.areas[area].file)
    heading = (
        f"Worked example: vector {code(name)} of [{table.name}]({site.table_href(PAGE, area, table_name)})"
        f" ([{src}:{line}]({site.file_href(PAGE, src, line)}))"
        + (f", for {site.ids(PAGE, row['covers'])}" if row.get("covers") else "")
        + (f". {row['description']}" if row.get("description") else ".")
    )
    out = [*wrap(site.link_ids(PAGE, heading)), ""]
    for column in table.columns:
        if column.name not in row or column.name in ("name", "description", "covers"):
            continue
        value = row[column.name]
        if column.type == "json" and isinstance(value, (dict, list)):
            out += [f"{column.name}:", "", "```json", *_lines(value), "```", ""]
        else:
            shown = code(text_recipe(value)) if column.type == "text" else code(to_json(value))
            out += [f"{column.name}: {shown}", ""]
    return out


def _lines(value: Any) -> list[str]:
    """JSON one element (or member) per line: a log reads as a list of events, each exact."""
    if isinstance(value, list) and value:
        return ["[", *[f"  {to_json(item)}," for item in value[:-1]], f"  {to_json(value[-1])}", "]"]
    if isinstance(value, dict) and len(to_json(value)) > 100:
        items = [f"  {json.dumps(k, ensure_ascii=False)}: {to_json(v)}" for k, v in value.items()]
        return ["{", *[item + "," for item in items[:-1]], items[-1], "}"]
    return [to_json(value)]


def _claims(site: Site) -> list[str]:
    vocab = site.spec.vocabulary("adapter-protocol.claim")
    operations = site.spec.table("adapter-protocol", "operations").rows
    out = ["| claim | what it says | operations it can make required |", "|---|---|---|"]
    for value in vocab.values:
        ops = ", ".join(code(str(row["operation"])) for row in operations if value in row["claims"])
        out.append(f"| {code(str(value))} | {site.link_ids(PAGE, vocab.docs.get(str(value), ''))} | {ops} |")
    return [*out, ""]


def _process_only(site: Site, tests: TestMap) -> list[str]:
    found = tests.process_only(site.spec)
    return [
        *wrap(
            f"**{len(found)} requirements** are checked only by tests that drive a product process: "
            f"{site.ids(PAGE, found)}."
        ),
        "",
    ]


def _pitfalls(spec: Spec, template: Path, lines: list[str], opened: int) -> list[Pitfall]:
    try:
        return pitfalls.parse_block(spec, lines, opened)
    except PitfallError as exc:
        raise GuideError(f"{template}:{exc}") from None


def guide_pitfalls(spec: Spec, template: Path = TEMPLATE) -> list[Pitfall]:
    """Every pitfall of the guide's template, in order (what tests/test_guide.py checks)."""
    found: list[Pitfall] = []
    block: list[str] | None = None
    opened = 0
    for number, line in enumerate(template.read_text(encoding="utf-8").splitlines(), 1):
        if block is None and line.strip() == pitfalls.FENCE:
            block, opened = [], number
        elif block is not None and line.startswith("```"):
            found += _pitfalls(spec, template, block, opened)
            block = None
        elif block is not None:
            block.append(line)
    return found


def render_guide(site: Site, tests: TestMap, template: Path = TEMPLATE) -> str:
    out: list[str] = []
    fenced = False
    pending: list[str] = []  # the lines of the paragraph or list item being read

    def flush() -> None:
        if pending:
            text = site.link_ids(PAGE, " ".join(line.strip() for line in pending))
            out.extend(bullet(text[2:]) if pending[0].startswith("- ") else wrap(text))
            pending.clear()

    block: list[str] | None = None  # the lines of the pitfalls block being read
    opened = 0
    for number, line in enumerate(template.read_text(encoding="utf-8").splitlines(), 1):
        if block is not None:
            if line.startswith("```"):
                out += pitfalls.render(site, PAGE, _pitfalls(site.spec, template, block, opened))
                block = None
            else:
                block.append(line)
            continue
        if line.strip() == pitfalls.FENCE and not fenced:
            flush()
            block, opened = [], number
            continue
        if line.startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        found = _DIRECTIVE.match(line.strip())
        if found is None:
            if line.startswith("- ") or not line.strip() or line.startswith(("#", "|")):
                flush()
            if line.startswith(("#", "|")) or not line.strip():
                out.append(site.link_ids(PAGE, line))
                if number == 1:
                    out += ["", GENERATED]
            else:
                pending.append(line)
            continue
        flush()
        name, args = found.group(1), (found.group(2) or "").split()
        try:
            if name == "operation" and len(args) == 1:
                out += _operation(site, args[0])
            elif name == "vector" and len(args) == 3:
                out += _vector(site, *args)
            elif name == "claims" and not args:
                out += _claims(site)
            elif name == "process-only" and not args:
                out += _process_only(site, tests)
            else:
                raise KeyError(f"unknown directive {line.strip()!r}")
        except KeyError as exc:
            raise GuideError(f"{template}:{number}: {exc.args[0]}") from None
    if block is not None:
        raise GuideError(f"{template}:{opened}: the pitfalls block is never closed")
    flush()
    return finish([line for n, line in enumerate(out) if line.strip() or n == 0 or out[n - 1].strip()])
