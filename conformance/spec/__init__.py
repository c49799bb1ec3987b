"""Load ``spec/`` into one validated object: schema first, then cross-references.

Every problem is reported with the file, the line and the field, and all problems of a
load are reported together, so a broken spec is mended in one pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import referencing
from jsonschema.exceptions import best_match

from conformance.spec import yamlpos
from conformance.spec.resources import spec_dir
from conformance.spec.schema_errors import SCHEMA_URN as SCHEMA_URN  # re-exported: callers import it from here
from conformance.spec.schema_errors import deepest
from conformance.spec.schema_errors import describe_error as describe_error  # re-exported: callers import it from here
from conformance.spec.yamlpos import Located, Path_, YamlError, format_path, load_located

_PREFIXES = {
    "selection": "SEL",
    "results": "RES",
    "background": "BGD",
    "diagnostic": "DIA",
    "claude-code": "CC",
    "codex": "CDX",
    "redaction": "RED",
    "adapter-protocol": "ADP",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the spec, located."""

    file: str
    line: int
    field: str
    message: str
    root: bool = False  # a cause of other problems (a repeated ID): listed before all others

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class SpecError(ValueError):
    """The spec did not load; ``problems`` says every place that is wrong."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (not p.root, p.file, p.line, p.field))
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"the spec has {len(self.problems)} problem(s):\n{lines}")


@dataclass(frozen=True)
class Requirement:
    """A normative statement with a stable ID."""

    id: str
    area: str
    level: str
    title: str
    text: str
    sources: tuple[dict[str, str], ...]
    tables: tuple[str, ...] = ()
    deviation: str | None = None
    excluded: str | None = None
    tested_by: str | None = None  # "project": checked by the project's own tests, not the conformance run
    line: int = 0  # where its entry starts in its area file


@dataclass(frozen=True)
class Vocabulary:
    """A closed set of values some rule uses."""

    area: str
    name: str
    title: str
    values: tuple[str | int, ...]
    description: str = ""
    docs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    vocab: str | None = None
    many: bool = False
    optional: bool = False
    nullable: bool = False
    title: str = ""


@dataclass(frozen=True)
class Table:
    """Rows of data or golden vectors, typed by their columns."""

    area: str
    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]
    description: str = ""
    requirements: tuple[str, ...] = ()


@dataclass(frozen=True)
class Area:
    """One spec file."""

    name: str
    file: str
    id_prefix: str
    title: str
    summary: str
    locked: dict[str, str] | None
    vocabularies: dict[str, Vocabulary]
    tables: dict[str, Table]
    requirements: tuple[Requirement, ...]


@dataclass(frozen=True)
class SeedStatement:
    text: str
    requirements: tuple[str, ...]
    informative: str | None


@dataclass(frozen=True)
class Seed:
    file: str
    title: str
    statements: tuple[SeedStatement, ...]


@dataclass(frozen=True, repr=False)
class Spec:
    """The whole contract as loaded from ``spec/``."""

    def __repr__(self) -> str:  # a fixture's repr opens every traceback: one line
        return f"Spec({str(self.root)!r}, version {self.version})"

    root: Path
    version: str
    title: str
    areas: dict[str, Area]
    seeds: tuple[Seed, ...]

    def requirements(self) -> Iterator[Requirement]:
        for area in self.areas.values():
            yield from area.requirements

    def requirement(self, rid: str) -> Requirement:
        for req in self.requirements():
            if req.id == rid:
                return req
        raise KeyError(f"no requirement {rid} in the spec")

    def vocabulary(self, ref: str, area: str | None = None) -> Vocabulary:
        """``ref`` is ``area.name``, or ``name`` inside ``area``."""
        owner, _, name = ref.rpartition(".")
        owner = owner or (area or "")
        try:
            return self.areas[owner].vocabularies[name]
        except KeyError:
            raise KeyError(f"no vocabulary {ref!r} in the spec") from None

    def table(self, area: str, name: str) -> Table:
        try:
            return self.areas[area].tables[name]
        except KeyError:
            raise KeyError(f"no table {area}.{name} in the spec") from None


def expand_text(recipe: Any) -> str:
    """Turn a ``text`` cell (a string or a {repeat|concat|codepoints} recipe) into its string."""
    if isinstance(recipe, str):
        return recipe
    if isinstance(recipe, dict):
        if "repeat" in recipe:
            return expand_text(recipe["repeat"]) * int(recipe["times"])
        if "concat" in recipe:
            return "".join(expand_text(part) for part in recipe["concat"])
        if "codepoints" in recipe:
            return "".join(chr(cp) for cp in recipe["codepoints"])
    raise ValueError(f"not a text recipe: {recipe!r}")


# --------------------------------------------------------------------------- schemas


@cache
def _registry(schema_root: Path) -> referencing.Registry[Any]:
    resources = []
    for file in sorted(schema_root.glob("*.json")):
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", file.name), referencing.Resource.from_contents(contents)))
    return referencing.Registry().with_resources(resources)


@cache
def schema_validator(root: Path, name: str) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for ``spec/schema/<name>.json``, with every sibling schema resolvable."""
    schema_root = root / "schema"
    schema = json.loads((schema_root / f"{name}.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, registry=_registry(schema_root))


@cache
def operations_schema(root: Path, definition: str) -> jsonschema.protocols.Validator:
    """A validator for one definition of spec/schema/operations.json (an operation's input or
    output, the declaration, an exec protocol line)."""
    return schema_validator(root, "operations").evolve(schema={"$ref": f"{SCHEMA_URN}operations#/$defs/{definition}"})


@cache
def compiled_registry(schema_root: Path) -> jsonschema_rs.Registry:
    """Every schema file of ``schema_root``, for the compiled (jsonschema-rs) validators."""
    resources = []
    for file in sorted(schema_root.glob("*.json")):
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", file.name), contents))
    return jsonschema_rs.Registry(resources)


def refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is not one of the spec's schemas; the suite never fetches a schema")


@cache
def compiled_schema(root: Path, name: str) -> jsonschema_rs.Validator | None:
    """The compiled twin of :func:`schema_validator`, or None for a schema it cannot build (a
    broken copy under test): then the pure-Python validator judges alone."""
    schema_root = root / "schema"
    try:
        schema = json.loads((schema_root / f"{name}.json").read_text(encoding="utf-8"))
        # Formats are annotations in Draft 2020-12, as the jsonschema validator treats them.
        return jsonschema_rs.Draft202012Validator(
            schema, registry=compiled_registry(schema_root), retriever=refuse_retrieval, validate_formats=False
        )
    except Exception:  # any schema the compiled engine refuses is the Python validator's to explain
        return None


def schema_problems(
    located: Located,
    validator: jsonschema.protocols.Validator,
    file: str,
    compiled: jsonschema_rs.Validator | None = None,
) -> list[Problem]:
    """Every schema violation of a loaded document, each at its line and field. A document the
    compiled twin accepts has none (the Python walk costs a second per cold load); only a
    rejected one is walked by the Python validator, which names each problem."""
    if compiled is not None:
        with contextlib.suppress(ValueError, OverflowError, TypeError):
            if compiled.is_valid(located.data):
                return []
    problems: dict[str, Problem] = {}
    for error in validator.iter_errors(located.data):
        error = deepest(error)
        path: Path_ = tuple(error.absolute_path)
        field = format_path(path)
        # Several subschemas may reject the same value; its first complaint says enough.
        problems.setdefault(field, Problem(file, located.line_of(path), field, error.message))
    return list(problems.values())


# --------------------------------------------------------------------------- loading


def spec_digest(root: Path) -> str:
    """A fingerprint of every file of a spec folder (and of the loader itself)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(Path(yamlpos.__file__).read_bytes())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_dir() -> Path:
    """The suite's folder in the user cache (XDG_CACHE_HOME or ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "subagent-conformance"


_CACHE_KEEP = 16  # loaded specs kept; tests load many edited copies, each once


def _cached(root: Path, digest: str) -> Spec | None:
    """The spec loaded earlier from a folder with exactly these contents, or None (absent,
    unreadable, corrupt or of another kind: every such case just loads the spec again)."""
    try:
        with (cache_dir() / f"spec-{digest}.pickle").open("rb") as file:
            spec = pickle.load(file)
    except Exception:  # an entry that cannot be read is only a missed shortcut
        return None
    if not isinstance(spec, Spec):
        return None
    return dataclasses.replace(spec, root=root)  # the same contents may sit in another folder


def _remember(spec: Spec, digest: str) -> None:
    """Keep a loaded spec for the other processes of a run (xdist workers, nested sessions,
    CLI commands); written whole or not at all, and never a reason to fail."""
    folder = cache_dir()
    with contextlib.suppress(OSError, pickle.PicklingError):
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=".spec-", delete=False) as file:
            pickle.dump(spec, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(file.name, folder / f"spec-{digest}.pickle")
        entries = sorted(folder.glob("spec-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in entries[_CACHE_KEEP:]:
            stale.unlink(missing_ok=True)


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []
        self.docs: dict[str, Located] = {}

    def problem(self, file: str, path: Path_, message: str, root: bool = False) -> None:
        doc = self.docs.get(file)
        line = doc.line_of(path) if doc else 1
        self.problems.append(Problem(file, line, format_path(path), message, root))

    def load(self, file: str, schema: str) -> Any:
        try:
            located = load_located(self.root / file)
        except FileNotFoundError:
            self.problems.append(Problem(file, 1, "(document)", "the file is missing"))
            return None
        except YamlError as exc:
            self.problems.append(Problem(file, exc.line, "(document)", exc.message))
            return None
        self.docs[file] = located
        if not (self.root / "schema" / f"{schema}.json").is_file():
            self.problems.append(Problem(file, 1, "(document)", f"no schema for it: schema/{schema}.json is missing"))
            return None
        found = schema_problems(located, schema_validator(self.root, schema), file, compiled_schema(self.root, schema))
        self.problems.extend(found)
        return None if found else located.data


def load_spec(root: Path | None = None) -> Spec:
    """Load and check the whole spec, or raise :class:`SpecError` naming every problem.

    The shipped spec is loaded once per process, and a spec that loaded is kept in the user's
    cache folder under the digest of its files (and of this loader), so that every later
    process — xdist workers, nested sessions, CLI commands — reads it back instead of parsing
    and checking it again. Treat the result as read-only.
    """
    if root is None:
        return _shipped_spec()
    return _load_spec(root)


@cache
def _shipped_spec() -> Spec:
    return _load_spec(spec_dir())


def _load_spec(root: Path) -> Spec:
    try:
        digest: str | None = spec_digest(root)
    except OSError:
        digest = None  # an unreadable file: the load below names it
    spec = _cached(root, digest) if digest else None
    if spec is None:
        spec = _load_spec_once(root)
        if digest:
            _remember(spec, digest)
    return spec


def _load_spec_once(root: Path) -> Spec:
    loader = _Loader(root)
    index = loader.load("index.yaml", "index")
    if index is None:
        raise SpecError(loader.problems)

    listed = {"index.yaml", index["seed_map"]} | {f"{a}.yaml" for a in index["areas"]}
    for stray in sorted(p.name for p in root.glob("*.yaml")):
        if stray not in listed:
            loader.problems.append(Problem(stray, 1, "(document)", "a spec file that index.yaml does not list"))

    areas: dict[str, Area] = {}
    for name in index["areas"]:
        data = loader.load(f"{name}.yaml", name)
        if data is None:
            continue
        if data["area"] != name:
            loader.problem(f"{name}.yaml", ("area",), f"is {data['area']!r}, but the file is {name}.yaml")
        areas[name] = _build_area(name, f"{name}.yaml", data, loader.docs[f"{name}.yaml"])

    seed_data = loader.load(index["seed_map"], "seeds")
    seeds = tuple(_build_seeds(seed_data)) if seed_data else ()
    spec = Spec(root, str(index["spec_version"]), index["title"], areas, seeds)
    # An area that did not load would make every reference to it look broken: say only
    # what is wrong with it, and check references into it once it loads.
    unloaded = {a for a in index["areas"] if a not in areas}
    _cross_check(spec, loader, index["seed_map"], unloaded)
    if loader.problems:
        raise SpecError(loader.problems)
    return spec


def _build_area(name: str, file: str, data: dict[str, Any], located: Located) -> Area:
    vocabularies = {
        vname: Vocabulary(name, vname, v["title"], tuple(v["values"]), v.get("description", ""), v.get("docs", {}))
        for vname, v in data.get("vocabularies", {}).items()
    }
    tables = {
        tname: Table(
            name,
            tname,
            t["title"],
            tuple(Column(**c) for c in t["columns"]),
            tuple(t["rows"]),
            t.get("description", ""),
            tuple(t.get("requirements", ())),
        )
        for tname, t in data.get("tables", {}).items()
    }
    requirements = tuple(
        Requirement(
            r["id"],
            name,
            r["level"],
            r["title"],
            r["text"],
            tuple(r["sources"]),
            tuple(r.get("tables", ())),
            r.get("deviation"),
            r.get("excluded"),
            r.get("tested_by"),
            located.line_of(("requirements", i)),
        )
        for i, r in enumerate(data["requirements"])
    )
    return Area(
        name,
        file,
        data["id_prefix"],
        data["title"],
        data["summary"],
        data.get("locked"),
        vocabularies,
        tables,
        requirements,
    )


def _build_seeds(data: dict[str, Any]) -> Iterator[Seed]:
    for seed in data["seeds"]:
        statements = tuple(
            SeedStatement(s["text"], tuple(s.get("requirements", ())), s.get("informative")) for s in seed["statements"]
        )
        yield Seed(seed["file"], seed["title"], statements)


def _cross_check(spec: Spec, loader: _Loader, seed_map: str, unloaded: set[str]) -> None:
    """What a JSON Schema cannot say: IDs, references between files, typed table cells."""
    ids: dict[str, str] = {}  # requirement ID -> "file:line" of its first definition
    unloaded_prefixes = {_PREFIXES[a] for a in unloaded}
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
