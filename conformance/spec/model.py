"""The spec model: the contract as loaded from ``spec/``, and the problems a load can find.

Plain frozen dataclasses, importing nothing else of the suite: every layer reads them, and a
loaded spec is pickled into the user cache as it is.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.spec.ranges import release_key

ID_PREFIXES = {  # each area's requirement-ID prefix, as its file's id_prefix says
    "selection": "SEL",
    "results": "RES",
    "background": "BGD",
    "diagnostic": "DIA",
    "claude-code": "CC",
    "codex": "CDX",
    "redaction": "RED",
    "adapter-protocol": "ADP",
    "releases": "REL",
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
    branches: tuple[str, ...] | None = None  # whose branches its rows are, where it narrows `requirements`
    branches_why: str = ""


def requirements_named(row: dict[str, Any], ids: Collection[str]) -> set[str]:
    """The requirement IDs a table row names in its own cells (a vector's ``covers``, a row's
    ``requirement``, …): the requirements whose branch the row is."""
    cells = [x for v in row.values() for x in (v if isinstance(v, list) else [v])]
    return {x for x in cells if isinstance(x, str) and x in ids}


@dataclass(frozen=True)
class ProductVersion:
    """One range of real product releases (an entry of an area's ``versions``) over which what
    the contract reads is constant: the base, whose union and mapping are the file's own
    vocabularies and tables, or a delta over the entry before it (union members, mapping rows,
    wire differences), each with its decisions. ``version`` is its first release."""

    version: str
    base: bool = False
    product_version: str | None = None  # the product the package drives (claude-code: the CLI), "{patch}" filled in
    sources: tuple[dict[str, str], ...] = ()
    union: dict[str, Any] = field(default_factory=dict)  # adds, into, out_of, docs, catch_all
    rows: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)  # table -> rows it adds
    wire: dict[str, Any] = field(default_factory=dict)
    decisions: tuple[dict[str, Any], ...] = ()
    releases: tuple[str, ...] = ()  # every release the range covers, in order; () means (version,)
    recorded: str | None = None  # the release whose wire was recorded (fixtures/recordings) and the real tier installs
    wire_note: str = ""  # how the range's wire facts are known (measured where, inferred from what)

    @property
    def covered(self) -> tuple[str, ...]:
        """The releases this range covers, first to last."""
        return self.releases or (self.version,)

    @property
    def span(self) -> str:
        """The range as people write it: 0.148.0–0.150.1, or one release."""
        first, last = self.covered[0], self.covered[-1]
        return first if first == last else f"{first}\N{EN DASH}{last}"

    def product_of(self, release: str) -> str | None:
        """The version of the product ``release`` drives (the Claude Code CLI of an SDK release)."""
        if self.product_version is None:
            return None
        return self.product_version.replace("{patch}", release.split("-")[0].rsplit(".", 1)[-1])


@dataclass(frozen=True)
class Area:
    """One spec file; a product's file stands at one covered release (``version``)."""

    name: str
    file: str
    id_prefix: str
    title: str
    summary: str
    product: dict[str, Any] | None  # {package, releases}: the npm package of a product area
    vocabularies: dict[str, Vocabulary]
    tables: dict[str, Table]
    requirements: tuple[Requirement, ...]
    versions: tuple[ProductVersion, ...] = ()
    version: str | None = None  # the covered release this area is at (the base as loaded)
    base_area: Area | None = field(default=None, repr=False, compare=False)  # as loaded, for at()

    @property
    def shipped(self) -> tuple[str, ...]:
        """The first release of each range entry, base first (one name per entry)."""
        return tuple(v.version for v in self.versions)

    @property
    def releases(self) -> tuple[str, ...]:
        """Every release the spec covers, in order."""
        return tuple(r for v in self.versions for r in v.covered)

    @property
    def ranges(self) -> str:
        """The covered ranges as one readable list, for messages: 0.147.0, 0.148.0–0.150.1, …"""
        return ", ".join(v.span for v in self.versions) or "none"

    def entry_for(self, release: str) -> ProductVersion | None:
        """The range entry that covers ``release``, or None when the spec does not cover it."""
        found = next((v for v in self.versions if release in v.covered), None)
        # else an entry named by a release it does not list (a broken spec, which check-spec names)
        return found or next((v for v in self.versions if v.version == release), None)

    def covers(self, release: str) -> bool:
        """Whether an adapter may claim ``release``: one of some entry's listed releases."""
        return self.entry_for(release) is not None

    def neighbours(self, release: str) -> tuple[str | None, str | None]:
        """The covered releases just before and just after ``release`` in release order (None at an
        end): what a release the spec does not cover yet is compared with."""
        key = release_key(release)
        before = [r for r in self.releases if release_key(r) < key]
        after = [r for r in self.releases if release_key(r) > key]
        return (max(before, key=release_key) if before else None, min(after, key=release_key) if after else None)

    @property
    def recorded(self) -> tuple[str, ...]:
        """The release of each range that was recorded and the real tier installs, base first."""
        return tuple(v.recorded for v in self.versions if v.recorded)

    @property
    def current(self) -> ProductVersion | None:
        """The range entry of the release this area is at."""
        return self.entry_for(self.version) if self.version else None

    def _index(self, release: str) -> int:
        entry = self.entry_for(release)
        if entry is None:
            raise KeyError(f"{self.name} covers no release {release!r} (covered: {self.ranges})")
        return self.versions.index(entry)

    @property
    def wire(self) -> dict[str, Any]:
        """The wire facts of this release: every entry's ``wire`` up to its range's, a later one over an earlier."""
        merged: dict[str, Any] = {}
        for entry in self.versions[: self._index(self.version) + 1] if self.version else ():
            merged = _merged(merged, entry.wire)
        return merged

    def at(self, version: str) -> Area:
        """This area as it stands at covered release ``version``: each later entry up to its range's adds its union
        members to the ``into`` vocabularies (and takes them out of the ``out_of`` ones) and to the
        many-valued ``cells`` it names, and its rows to their tables; a row whose vocabulary cell
        names a value that left its vocabulary leaves its table (a newer variant that joined the
        union is no longer a newer variant)."""
        start = self.base_area or self
        upto = start._index(version)
        vocabularies, tables = dict(start.vocabularies), dict(start.tables)
        left: set[str | int] = set()
        for entry in start.versions[1 : upto + 1]:
            adds = tuple(entry.union.get("adds", ()))
            docs = entry.union.get("docs", {})
            for name in entry.union.get("into", ()):
                vocab = vocabularies[name]
                new = tuple(m for m in adds if m not in vocab.values)
                extra = {m: docs[m] for m in new if m in docs} if vocab.docs else {}
                vocabularies[name] = replace(vocab, values=vocab.values + new, docs={**vocab.docs, **extra})
            for name in entry.union.get("out_of", ()):
                vocab = vocabularies[name]
                left |= {v for v in vocab.values if v in adds}
                kept = tuple(v for v in vocab.values if v not in adds)
                vocabularies[name] = replace(
                    vocab, values=kept, docs={k: d for k, d in vocab.docs.items() if k in kept}
                )
            for name, rows in entry.rows.items():
                tables[name] = replace(tables[name], rows=tables[name].rows + tuple(rows))
            for cell in entry.union.get("cells", ()):
                table, where, column = tables[cell["table"]], cell["where"], cell["column"]
                rows = tuple(
                    {**r, column: [*r[column], *(m for m in adds if m not in r[column])]}
                    if all(r.get(k) == v for k, v in where.items())
                    else r
                    for r in table.rows
                )
                tables[cell["table"]] = replace(table, rows=rows)
        for name, table in tables.items():
            own = {  # column -> its vocabulary, for the columns whose vocabulary is this area's
                c.name: vocabularies[ref[2]]
                for c in table.columns
                if c.vocab is not None and (ref := c.vocab.rpartition("."))[0] in ("", self.name)
            }
            if left and own:
                rows = tuple(
                    r for r in table.rows if not any(_names_any(r.get(c), left, vocab) for c, vocab in own.items())
                )
                tables[name] = replace(table, rows=rows)
        return replace(start, vocabularies=vocabularies, tables=tables, version=version, base_area=start)


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

    def at(self, versions: Mapping[str, str]) -> Spec:
        """The contract at these product releases ({area: covered release}); other areas as they are.
        A product or release the spec does not cover is a KeyError naming the ranges it covers."""
        areas = dict(self.areas)
        for product, version in versions.items():
            if product not in areas or not areas[product].versions:
                raise KeyError(f"no product area {product!r} in the spec")
            areas[product] = areas[product].at(version)
        return replace(self, areas=areas)

    def product_versions(self) -> dict[str, str]:
        """The version each product area is at: {area: version}."""
        return {name: area.version for name, area in self.areas.items() if area.version is not None}

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


def _merged(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """``later`` over ``earlier``, object members merged key by key."""
    out = dict(earlier)
    for key, value in later.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = _merged(out[key], value) if both else value
    return out


def _names_any(cell: Any, left: set[str | int], vocab: Vocabulary) -> bool:
    """Whether a vocabulary cell (one value or a list) names a value that left ``vocab``."""
    values = cell if isinstance(cell, list) else [cell]
    return any(isinstance(v, (str, int)) and v in left and v not in vocab.values for v in values)
