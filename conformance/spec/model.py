"""The spec model: the contract as loaded from ``spec/``, and the problems a load can find.

Plain frozen dataclasses, importing nothing else of the suite: every layer reads them, and a
loaded spec is pickled into the user cache as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ID_PREFIXES = {  # each area's requirement-ID prefix, as its file's id_prefix says
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
    """One typed column of a table; its type says how every cell is checked."""

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
    """One statement of a seed note and the requirements that carry it (or why none does)."""

    text: str
    requirements: tuple[str, ...]
    informative: str | None


@dataclass(frozen=True)
class Seed:
    """One seed note, cut into statements, as spec/seeds.yaml maps it."""

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
