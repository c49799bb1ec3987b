"""Load ``spec/`` into one validated object: schema first, then cross-references (``crosscheck``).

Every problem is reported with the file, the line and the field, and all problems of a
load are reported together, so a broken spec is mended in one pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from conformance.spec.cache import cached_spec, remember_spec, spec_digest
from conformance.spec.crosscheck import cross_check
from conformance.spec.model import (
    Area,
    Column,
    Problem,
    ProductVersion,
    Requirement,
    Seed,
    SeedStatement,
    Spec,
    SpecError,
    Table,
    Vocabulary,
)
from conformance.spec.resources import spec_dir
from conformance.spec.schemas import compiled_schema, schema_problems, schema_validator
from conformance.spec.yamlpos import Located, Path_, YamlError, format_path, load_located


class _Loader:
    """The documents of one load and every problem found in them so far, each at its line."""

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
    cache folder under the digest of its files (and of the spec model's modules), so that every later
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
    spec = cached_spec(root, digest) if digest else None
    if spec is None:
        spec = _load_spec_once(root)
        if digest:
            remember_spec(spec, digest)
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
    cross_check(spec, loader, index["seed_map"], unloaded)
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
            tuple(t["branches"]["requirements"]) if "branches" in t else None,
            t["branches"]["why"] if "branches" in t else "",
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
    versions = tuple(
        ProductVersion(
            str(v["version"]),
            bool(v.get("base", False)),
            v.get("product_version"),
            tuple(v.get("sources", ())),
            v.get("union", {}),
            {table: tuple(rows) for table, rows in v.get("rows", {}).items()},
            v.get("wire", {}),
            tuple(v.get("decisions", ())),
            tuple(str(r) for r in v.get("releases", ())),
            v.get("recorded"),
            str(v.get("wire_note", "")),
        )
        for v in data.get("versions", ())
    )
    return Area(
        name,
        file,
        data["id_prefix"],
        data["title"],
        data["summary"],
        data.get("product"),
        vocabularies,
        tables,
        requirements,
        versions,
        versions[0].version if versions else None,
    )


def _build_seeds(data: dict[str, Any]) -> Iterator[Seed]:
    for seed in data["seeds"]:
        statements = tuple(
            SeedStatement(s["text"], tuple(s.get("requirements", ())), s.get("informative")) for s in seed["statements"]
        )
        yield Seed(seed["file"], seed["title"], statements)
