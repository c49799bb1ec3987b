"""The cross-references of a spec load: what a JSON Schema cannot say (IDs, references between
files, typed table cells, product versions), apart from the loader so each stays readable."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import jsonschema
from jsonschema.exceptions import best_match

from conformance.spec.model import ID_PREFIXES, Area, Spec, Table, requirements_named
from conformance.spec.ranges import range_problems
from conformance.spec.schema_errors import SCHEMA_URN
from conformance.spec.schemas import schema_validator
from conformance.spec.yamlpos import Path_

if TYPE_CHECKING:
    from conformance.spec.loading import _Loader

# What the upgrade gate's draft leaves for a person to decide (conformance/products/draft.py); a
# shipped entry that still holds one would let a version in with a decision nobody took.
PLACEHOLDER = "TODO: "


def cross_check(spec: Spec, loader: _Loader, seed_map: str, unloaded: set[str]) -> None:
    """What a JSON Schema cannot say: IDs, references between files, typed table cells."""
    ids: dict[str, str] = {}  # requirement ID -> "file:line" of its first definition
    unloaded_prefixes = {ID_PREFIXES[a] for a in unloaded}
    stated_tables: set[tuple[str, str]] = set()
    seed_files = {p.name for p in (spec.root / "seeds").glob("*.txt")}
    text_validator = schema_validator(spec.root, "common")

    for area in spec.areas.values():
        for i, req in enumerate(area.requirements):
            at: Path_ = ("requirements", i)
            if not req.id.startswith(area.id_prefix + "-"):
                loader.problem(area.file, at + ("id",), f"{req.id} does not carry this file's prefix {area.id_prefix}")
            if req.id in ids:
                loader.problem(area.file, at + ("id",), f"{req.id} is already used at {ids[req.id]}", root=True)
            line = loader.docs[area.file].line_of(at + ("id",)) if area.file in loader.docs else 1
            ids.setdefault(req.id, f"{area.file}:{line}")
            for t in req.tables:
                if t not in area.tables:
                    loader.problem(area.file, at + ("tables",), f"names table {t!r}, which {area.file} does not have")
                stated_tables.add((area.name, t))
            for j, source in enumerate(req.sources):
                if "seed" in source and source["seed"] not in seed_files:
                    loader.problem(
                        area.file, at + ("sources", j, "seed"), f"no seed file {source['seed']} in spec/seeds/"
                    )

    def check_ids(file: str, path: Path_, rids: Any) -> None:
        for k, rid in enumerate(rids):
            if rid not in ids and rid.split("-")[0] not in unloaded_prefixes:
                loader.problem(file, path + (k,), f"names requirement {rid}, which no spec file defines")

    for area in spec.areas.values():
        for tname, table in area.tables.items():
            base: Path_ = ("tables", tname)
            check_ids(area.file, base + ("requirements",), table.requirements)
            if table.requirements:
                stated_tables.add((area.name, tname))
            if table.branches is not None:
                _check_branches(loader, area, base, table, ids)
            if (area.name, tname) not in stated_tables and not any(tname in r.tables for r in area.requirements):
                loader.problem(
                    area.file,
                    base,
                    "no requirement states this table (give it `requirements` or name it in a requirement's `tables`)",
                )
            names = [c.name for c in table.columns]
            if len(set(names)) != len(names):
                loader.problem(area.file, base + ("columns",), "column names repeat")
            for c, column in enumerate(table.columns):
                if column.vocab is not None and column.vocab.rpartition(".")[0] not in unloaded:
                    try:
                        spec.vocabulary(column.vocab, area.name)
                    except KeyError as exc:
                        loader.problem(area.file, base + ("columns", c, "vocab"), str(exc.args[0]))
            for r, row in enumerate(table.rows):
                _check_row(spec, loader, area, base + ("rows", r), table, row, check_ids, text_validator, unloaded)

    for area in spec.areas.values():
        _check_versions(spec, loader, area, check_ids, text_validator, unloaded)

    for s, seed in enumerate(spec.seeds):
        if seed.file not in seed_files:
            loader.problem(seed_map, ("seeds", s, "file"), f"no seed file {seed.file} in spec/seeds/")
        for k, statement in enumerate(seed.statements):
            check_ids(seed_map, ("seeds", s, "statements", k, "requirements"), statement.requirements)


def _check_row(
    spec: Spec,
    loader: _Loader,
    area: Area,
    at: Path_,
    table: Table,
    row: dict[str, Any],
    check_ids: Any,
    text_validator: jsonschema.protocols.Validator,
    unloaded: set[str],
) -> None:
    columns = {c.name: c for c in table.columns}
    for key in row:
        if key not in columns:
            loader.problem(area.file, at + (key,), f"is not a column of table {table.name}")
    for column in table.columns:
        path = at + (column.name,)
        if column.name not in row:
            if not column.optional:
                loader.problem(area.file, at, f"lacks column {column.name!r}")
            continue
        value = row[column.name]
        if value is None:
            if not column.nullable:
                loader.problem(area.file, path, "is null, but the column is not nullable")
            continue
        kind = column.type
        if kind == "string" and not isinstance(value, str):
            loader.problem(area.file, path, f"{value!r} is not a string")
        elif kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            loader.problem(area.file, path, f"{value!r} is not an integer")
        elif kind == "boolean" and not isinstance(value, bool):
            loader.problem(area.file, path, f"{value!r} is not a boolean")
        elif kind == "text":
            error = best_match(
                text_validator.evolve(schema={"$ref": SCHEMA_URN + "common#/$defs/text"}).iter_errors(value)
            )
            if error is not None:
                loader.problem(area.file, path, f"not a text recipe: {error.message}")
        elif kind == "requirements":
            if not isinstance(value, list) or not value:
                loader.problem(area.file, path, "must be a non-empty list of requirement IDs")
            else:
                check_ids(area.file, path, value)
        elif kind == "vocab" and column.vocab is not None and column.vocab.rpartition(".")[0] not in unloaded:
            try:
                vocab = spec.vocabulary(column.vocab, area.name)
            except KeyError:
                continue  # reported on the column
            values = value if column.many else [value]
            if column.many and not isinstance(value, list):
                loader.problem(area.file, path, f"{value!r} is not a list of {column.vocab} values")
                continue
            for k, v in enumerate(values):
                if v not in vocab.values:
                    where = path + (k,) if column.many else path
                    loader.problem(area.file, where, f"{v!r} is not declared in vocabulary {vocab.area}.{vocab.name}")


def _check_versions(
    spec: Spec,
    loader: _Loader,
    area: Area,
    check_ids: Any,
    text_validator: jsonschema.protocols.Validator,
    unloaded: set[str],
) -> None:
    """A product area's ``versions``: one base, first; each delta names this area's vocabularies and
    tables, adds members its union did not have, adds rows that are valid at its version, and
    records a decision for every member it adds, its catch-all and every wire key (and no other)."""
    seen: set[str] = set()
    raw = loader.docs[area.file].data.get("versions", []) if area.file in loader.docs else []
    for where in _placeholders(raw, ("versions",)):
        loader.problem(
            area.file,
            where,
            f"is a placeholder the upgrade gate's draft left ({PLACEHOLDER!r}…): decide it before shipping",
        )
    if area.file in loader.docs:  # the ranges partition npm's list: sorted, no overlap, no gap, none twice
        for where, message in range_problems(loader.docs[area.file].data):
            loader.problem(area.file, where, message)
    for i, entry in enumerate(area.versions):
        at: Path_ = ("versions", i)
        if entry.version in seen:
            loader.problem(area.file, at + ("version",), f"{entry.version} is already a shipped version")
        seen.add(entry.version)
        if i and entry.base:
            loader.problem(area.file, at + ("base",), "only the first entry is the base")
        if not i:
            continue
        before = area.at(area.versions[i - 1].version)
        adds = list(entry.union.get("adds", ()))
        for key in ("into", "out_of"):
            for k, name in enumerate(entry.union.get(key, ())):
                if name not in area.vocabularies:
                    loader.problem(area.file, at + ("union", key, k), f"{name!r} is not a vocabulary of {area.file}")
        for k, member in enumerate(adds):
            for name in entry.union.get("into", ()):
                if name in before.vocabularies and member in before.vocabularies[name].values:
                    where = at + ("union", "adds", k)
                    loader.problem(
                        area.file, where, f"{member!r} is already in vocabulary {name} at the version before"
                    )
        for k, cell in enumerate(entry.union.get("cells", ())):
            table = area.tables.get(cell["table"])
            column = next((c for c in table.columns if c.name == cell["column"]), None) if table else None
            if column is None or not column.many:
                where = at + ("union", "cells", k)
                loader.problem(
                    area.file, where, f"names no many-valued column {cell['column']!r} of a table {cell['table']!r}"
                )
            elif table is not None and not any(
                all(r.get(key) == v for key, v in cell["where"].items()) for r in table.rows
            ):
                loader.problem(
                    area.file, at + ("union", "cells", k, "where"), f"matches no row of table {cell['table']}"
                )
        catch_all = entry.union.get("catch_all")
        if catch_all and not any(catch_all["category"] in v.values for v in area.vocabularies.values()):
            loader.problem(
                area.file, at + ("union", "catch_all", "category"), "is no value of this file's vocabularies"
            )
        now = replace(spec, areas={**spec.areas, area.name: area.at(entry.version)})
        for tname, rows in entry.rows.items():
            if tname not in area.tables:
                loader.problem(area.file, at + ("rows", tname), f"{area.file} has no table {tname!r}")
                continue
            table = now.areas[area.name].tables[tname]
            for r, row in enumerate(rows):
                where = at + ("rows", tname, r)
                _check_row(now, loader, now.areas[area.name], where, table, row, check_ids, text_validator, unloaded)
        needed = [*adds, *(["catch_all"] if catch_all else []), *(f"wire.{key}" for key in entry.wire)]
        decided = [d["about"] for d in entry.decisions]
        for member in needed:
            if member not in decided:
                loader.problem(
                    area.file,
                    at + ("decisions",),
                    f"no decision about {member} (every new member, the catch-all and every wire key need one)",
                )
        for d, about in enumerate(decided):
            if about not in needed:
                loader.problem(
                    area.file,
                    at + ("decisions", d, "about"),
                    f"{about!r} is no member, catch_all or wire key this version adds",
                )


def is_placeholder(value: Any) -> bool:
    """Whether ``value`` is what a draft leaves for a person to decide."""
    return isinstance(value, str) and value.startswith(PLACEHOLDER)


def _placeholders(value: Any, at: Path_) -> list[Path_]:
    """Where a draft's placeholder is left in ``value``: as a string, or as a mapping's key."""
    if is_placeholder(value):
        return [at]
    found: list[Path_] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if is_placeholder(key):
                found.append(at + (key,))
            found.extend(_placeholders(item, at + (key,)))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            found.extend(_placeholders(item, at + (k,)))
    return found


def _check_branches(loader: _Loader, area: Area, base: Path_, table: Table, ids: dict[str, str]) -> None:
    """A table's ``branches`` narrows its own ``requirements``, and only where no row says whose
    branch it is (a row that names requirements in its cells is theirs, conformance/verdict/reach.py)."""
    for k, rid in enumerate(table.branches or ()):
        if rid not in table.requirements:
            loader.problem(
                area.file, base + ("branches", "requirements", k), f"{rid} is not one of the table's requirements"
            )
    if any(requirements_named(row, ids) for row in table.rows):
        loader.problem(
            area.file,
            base + ("branches",),
            "its rows name requirements in their cells, which say whose branch each row is",
        )
