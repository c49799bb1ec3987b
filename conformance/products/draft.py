"""The draft ``versions`` entry the upgrade gate writes for a product version the spec does not ship.

A draft is a delta over the nearest shipped version, in the format of ``versions`` in
spec/codex.yaml and spec/claude-code.yaml, with its mechanical part filled from the version's
official unions: the members it adds, the vocabularies they join and leave, each one's mapping
row (kind, wire form, whether its detail carries an HTTP status), the catch-all member's schema.
Whatever a person decides is a placeholder, a string starting with :data:`PLACEHOLDER`:

- a placeholder value (a stop reason, a doc line, the catch-all's category) is to be replaced;
- a placeholder key of a mapping (``wire``, ``rows``) stands for the keys a person adds there;
- a placeholder item at the end of a list (``sources``, ``decisions``) stands for the items a
  person adds there (the wire differences' decisions, the sources of the evidence).

:func:`decisions` lists what a person must decide, one line each.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from conformance.spec import Spec
from conformance.spec.crosscheck import PLACEHOLDER, is_placeholder

Json = Any

MAPPING_TABLE = {"codex": "variants", "claude-code": "result_classification"}
"""The table of each product's area that maps its union's members (the rows a version adds)."""

UNION_VOCABULARY = {"codex": "codex.variant", "claude-code": "claude-code.result_subtype"}
"""The vocabulary holding each product's whole official union."""

WIRE_DECISION = "each wire difference from the nearest shipped version"
"""How the decision line on wire differences starts (release day replaces it by one line per new fact)."""

_VERSION_WORD = re.compile(r"\d+\.\d+\.\d+")


def placeholder(what: str) -> str:
    return PLACEHOLDER + what


def catch_all_label(schema: Json) -> str:
    """How a catch-all member (a member naming no variant) is listed among a union's members."""
    kinds = schema.get("type", "any value") if isinstance(schema, dict) else "any value"
    return f"(catch-all: {'|'.join(kinds) if isinstance(kinds, list) else kinds})"


def _stop_reason(spec: Spec, member: str) -> str:
    values = ", ".join(str(v) for v in spec.vocabulary("results.stop_reason").values)
    return placeholder(f"the stop reason of {member} ({values})")


def _object_wire(name: str, detail: Json) -> Json:
    """A minimal wire form of an object member: its one key, each required detail property set
    to its first enum value or its const (an optional one, such as the status, left out)."""
    detail = detail if isinstance(detail, dict) else {}
    properties = detail.get("properties") or {}
    shown: dict[str, Json] = {}
    for key in detail.get("required") or []:
        prop = properties.get(key) or {}
        if isinstance(prop.get("enum"), list) and prop["enum"]:
            shown[key] = prop["enum"][0]
        elif "const" in prop:
            shown[key] = prop["const"]
        else:
            shown[key] = placeholder(f"a value of {name}.{key}")
    return {name: shown}


def _codex_row(spec: Spec, member: str, kind: str, detail: Json, with_status: bool) -> Json:
    """The ``variants`` row of a new CodexErrorInfo member (the columns of that table)."""
    return {
        "variant": member,
        "kind": kind,
        "wire": member if kind == "string" else _object_wire(member, detail),
        "keeps_http_status": with_status,
        "stop_reason": _stop_reason(spec, member),
    }


def _claude_row(spec: Spec, member: str, is_error: bool) -> Json:
    """The ``result_classification`` row of a new result subtype: for an error subtype, the row of
    the first error subtype the spec maps with the subtype's name put in; else all to decide."""
    table = spec.table("claude-code", MAPPING_TABLE["claude-code"])
    model = str(spec.vocabulary("claude-code.error_subtype").values[0])
    analogue = next((row for row in table.rows if row.get("category") == model), None)
    if not is_error or analogue is None:
        return {"name": member, "condition": placeholder(f"how a result with subtype {member!r} is classified")}
    dashed = (model.replace("_", "-"), member.replace("_", "-"))
    row = {k: v.replace(model, member).replace(*dashed) if isinstance(v, str) else v for k, v in analogue.items()}
    return {**row, "stop_reason": _stop_reason(spec, member)}


def _joins(spec: Spec, product: str, peers: list[str]) -> list[str]:
    """The vocabularies of the product's area holding every one of ``peers`` (the members a new
    member is like), in file order: the vocabularies the new member joins."""
    vocabularies = spec.areas[product].vocabularies
    return [name for name, vocab in vocabularies.items() if peers and set(peers) <= {str(v) for v in vocab.values}]


def _cells(spec: Spec, product: str, peers: list[str], joins: list[str]) -> list[Json]:
    """The many-valued cells of the product's tables that hold every one of ``peers`` and draw on
    a vocabulary the new member joins: the cells it joins too, each row named by its first
    column whose value no other row shares."""
    found = []
    for table in spec.areas[product].tables.values():
        for column in table.columns:
            if not (column.many and column.vocab and column.vocab.rpartition(".")[2] in joins):
                continue
            for row in table.rows:
                cell = row.get(column.name)
                if not (peers and isinstance(cell, list) and set(peers) <= {str(v) for v in cell}):
                    continue
                key = next(
                    c.name
                    for c in table.columns
                    if isinstance(row.get(c.name), (str, int))
                    and [r.get(c.name) for r in table.rows].count(row[c.name]) == 1
                )
                found.append({"table": table.name, "where": {key: row[key]}, "column": column.name})
    return found


def _union_changes(spec: Spec, product: str, union: Any, second: Any, adds: list[str]) -> tuple[Json, list[str]]:
    """Where the new members go (``adds``, ``into``, ``out_of``, ``cells``, ``docs`` of the
    entry's ``union``): wherever the members they are like (same kind, same place in the second
    union) all are; and what the format cannot say (members that would go to different places)."""
    shipped = [str(v) for v in spec.vocabulary(UNION_VOCABULARY[product]).values]
    named = [m for m in union.members if m in union.kinds]
    notes: list[str] = []
    changes: dict[str, Json] = {}

    def like(member: str) -> tuple[str, bool]:
        return union.kinds[member], member in second.members

    peers = {m: [p for p in shipped if p in named and like(p) == like(m)] for m in adds}
    joins = {m: _joins(spec, product, peers[m]) for m in adds}
    into = [name for name in joins[adds[0]] if all(name in j for j in joins.values())]
    into = into or [UNION_VOCABULARY[product].split(".")[1]]
    notes += [
        f"{m} is like members that are also in {', '.join(n for n in j if n not in into)}, but `into` is one "
        "list for every member of an entry: split the version or ask the maintainers"
        for m, j in joins.items()
        if any(n not in into for n in j)
    ]
    vocabularies = spec.areas[product].vocabularies
    changes["adds"] = adds
    changes["into"] = into
    out_of = [n for n, v in vocabularies.items() if n not in into and any(m in v.values for m in adds)]
    if out_of:
        changes["out_of"] = out_of
    cells = {m: _cells(spec, product, peers[m], into) for m in adds}
    common = [c for c in cells[adds[0]] if all(c in found for found in cells.values())]
    if common:
        changes["cells"] = common
    notes += [
        f"{m} is like members that are also in the cells {json.dumps([c for c in found if c not in common])}, "
        "but `cells` is one list for every member of an entry: split the version or ask the maintainers"
        for m, found in cells.items()
        if any(c not in common for c in found)
    ]
    if any(vocabularies[name].docs for name in into):
        changes["docs"] = {m: placeholder(f"one line on {m}" + _described(union, m)) for m in adds}
    return changes, notes


def product_version_of(spec: Spec, product: str, release: str, printed: str | None) -> str:
    """The ``product_version`` of a draft of ``release``, in the form the shipped entries use:
    ``2.1.{patch}`` (the covered neighbour's form, or the printed version with its patch, when
    that patch is the release's), else the version the binary printed (``2.1.332 (Claude Code)``);
    offline, nothing printed, a placeholder."""
    found = _VERSION_WORD.search(printed or "")
    if found is None:
        return placeholder("the version of the product this package drives")
    area = spec.areas[product]
    form = area.current.product_version if area.current else None
    patch = release.split("-")[0].rsplit(".", 1)[-1]
    if form and form.replace("{patch}", patch) == found.group(0):
        return form
    head, _, printed_patch = found.group(0).rpartition(".")
    return f"{head}.{{patch}}" if printed_patch == patch else found.group(0)


def draft_entry(
    spec: Spec, product: str, package: str, version: str, unions: list[Any], printed_version: str | None
) -> tuple[Json, list[str]]:
    """The ``versions`` entry of ``version`` of ``package`` over ``spec`` (the contract at the
    nearest shipped version), its official unions read as ``unions`` (upgrade.Union: the whole
    union, then the members that carry a status or an error; ``printed_version`` is what the
    installed binary says of itself, when it ran), and what the format cannot say of it."""
    [union, second] = unions
    shipped = [str(v) for v in spec.vocabulary(UNION_VOCABULARY[product]).values]
    named = [m for m in union.members if m in union.kinds]
    adds = [m for m in named if m not in shipped]
    entry: dict[str, Json] = {"version": version, "releases": [version]}  # a range of one release, until measured
    entry["recorded"] = placeholder(f"the release whose wire was recorded ({version} once re-recorded), or no key")
    entry["wire_note"] = placeholder(f"how {version}'s wire facts are known (recorded, measured or inferred; where)")
    if product == "claude-code":
        entry["product_version"] = product_version_of(spec, product, version, printed_version)
    entry["sources"] = [placeholder(f"where the union was read ({package}@{version} {union.source}), and each run")]
    changes, notes = _union_changes(spec, product, union, second, adds) if adds else ({}, [])
    catch_alls = [s for s in union.catch_alls if catch_all_label(s) not in recorded_catch_alls(spec, product)]
    if catch_alls:
        changes["catch_all"] = {
            "schema": catch_alls[0],
            "category": placeholder("the category of a value only the catch-all matches"),
        }
    if changes:
        entry["union"] = changes
    if adds:
        if product == "codex":
            rows = [_codex_row(spec, m, union.kinds[m], union.details.get(m), m in second.members) for m in adds]
        else:
            rows = [_claude_row(spec, m, m in second.members) for m in adds]
        entry["rows"] = {MAPPING_TABLE[product]: rows, placeholder("table: the golden vectors of wire differences"): []}
    entry["wire"] = {placeholder(f"key: each thing {version}'s wire does differently (re-record the cases)"): None}
    entry["decisions"] = [
        *[
            {"about": m, "decision": placeholder(_prompt(m, product)), "sources": [placeholder("the evidence")]}
            for m in adds
        ],
        *[
            {
                "about": "catch_all",
                "decision": placeholder(_prompt("catch_all", product)),
                "sources": [placeholder("the evidence")],
            }
            for _ in catch_alls[:1]
        ],
        placeholder("one decision about wire.<key> for each key of wire, with its sources"),
    ]
    return entry, notes


def _described(union: Any, member: str) -> str:
    text = union.descriptions.get(member)
    return f" (the schema says: {text})" if text else ""


def _prompt(about: str, product: str) -> str:
    if about == "catch_all":
        return "how a value matched only by the catch-all member is categorised, and why"
    status = ", whether it keeps an HTTP status" if product == "codex" else ""
    return f"{about}'s category (kept verbatim, or unknown){status} and its stop reason, and why"


def recorded_catch_alls(spec: Spec, product: str) -> list[str]:
    """The catch-all members recorded up to the version ``spec`` stands at."""
    area = spec.areas[product]
    entry = area.entry_for(area.version) if area.version else None  # the range the release is in
    upto = area.versions[: area.versions.index(entry) + 1] if entry is not None else ()
    return [catch_all_label(v.union["catch_all"]["schema"]) for v in upto if "catch_all" in v.union]


def decisions(entry: Json, notes: list[str], removed: tuple[str, ...] = (), later: tuple[str, ...] = ()) -> list[str]:
    """What a person must decide before ``entry`` can ship, one line each (``notes``: what the
    format cannot say of it; ``removed``: members the nearest shipped union has and the
    version's has not; ``later``: the shipped versions after it)."""
    union = entry.get("union") or {}
    out = list(notes)
    if later:
        out.append(
            f"where it goes: the spec ships {', '.join(later)} after it, each a delta over the version before "
            f"it; putting {entry['version']} before {later[0]} makes {later[0]}'s entry a delta over it"
        )
    if is_placeholder(entry.get("product_version")):
        out.append("product_version: the version of the product the package drives (its --version)")
    for table, rows in (entry.get("rows") or {}).items():
        for row in rows:
            name = row.get("variant") or row.get("category") or row.get("name")
            out.append(
                f"{name}: its category (kept verbatim as a member of the version's union, or unknown) and its "
                f"stop reason (table {table}), and its doc line"
            )
    for member in removed:
        out.append(f"{member}: no longer in the union, which the versions format cannot say yet; ask the maintainers")
    if "catch_all" in union:
        out.append(
            f"the catch-all member {json.dumps(union['catch_all']['schema'])}: the category of a value only it matches"
        )
    out.append(WIRE_DECISION + " (wire.<key>), shown by a recording or run")
    out.append("the sources of each decision (a seed statement, a product artefact, a recording)")
    return out


def dump(entry: Json, decided: list[str]) -> str:
    """The draft as YAML: a one-item list to paste under the area's ``versions``, with the
    decisions to take as comments above it."""
    head = [
        f"# Draft `versions` entry for {entry['version']}, written by `subagent-conformance upgrade-check`.",
        f'# Every "{PLACEHOLDER}..." is for a person to decide, with evidence:',
        *[f"#   {n}. {line}" for n, line in enumerate(decided, 1)],
    ]
    body = yaml.dump([entry], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    return "\n".join(head) + "\n" + body


_FLOW_LIMIT = 100  # characters: a collection of scalars this short is written on one line, as the spec does


class _Dumper(yaml.SafeDumper):
    """Block style, except short collections of scalars (a row, a list of names) on one line."""

    def represent_sequence(self, tag: str, sequence: Any, flow_style: bool | None = None) -> yaml.SequenceNode:
        return super().represent_sequence(tag, sequence, _flow(sequence))

    def represent_mapping(self, tag: str, mapping: Any, flow_style: bool | None = None) -> yaml.MappingNode:
        return super().represent_mapping(tag, mapping, _flow(mapping))

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _flow(collection: Any) -> bool:
    items = collection.values() if isinstance(collection, dict) else collection
    scalars = all(not isinstance(item, (dict, list)) for item in items)
    return scalars and not any(is_placeholder(i) for i in items) and len(json.dumps(collection)) <= _FLOW_LIMIT
