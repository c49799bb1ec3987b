"""Release day: the upgrade gate for a product release the spec does not cover yet.

``upgrade-check`` compares the release's official unions with those of both covered neighbours
(the nearest covered release below it and above it); online it also installs the release and
records every real-products case against the loopback fakes, and reads each recording as the
contract does, beside the neighbour's recording. Every difference is named and classified, as
oasdiff classifies API changes as breaking or not, by table releases.facts (spec/releases.yaml,
REL-001): whether the contract reads it. Nothing the contract reads changed: the release is equivalent to the
neighbour, and ``--write-versions FILE`` records it (conformance/spec/releases.py) for a run to
test it under the neighbour's contract. Something did: a draft ``versions`` entry over the
neighbour below, carrying every decision another entry of the spec already took for the same
member (:func:`carry_decisions`), so that only new decisions are left open.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import conformance
from conformance.products.draft import MAPPING_TABLE, WIRE_DECISION, catch_all_label
from conformance.products.packages import Installed, install
from conformance.products.recordings import Case, load_cases
from conformance.products.release_wire import Fresh, reader, record_and_compare, recorder
from conformance.products.upgrade import (
    _COMMENTS,
    CLAUDE_TYPES_FILE,
    UnionError,
    _alias,
    _literals,
    assess,
    package,
    read_unions,
)
from conformance.products.wire_facts import carry_wire, observed
from conformance.spec import Spec
from conformance.spec.crosscheck import is_placeholder
from conformance.spec.releases import covered_neighbours, verified_entry

Json = Any


@dataclass(frozen=True)
class Fact:
    """One thing a release can change, and whether the contract reads it (and why): a row of
    table releases.facts (spec/releases.yaml, REL-001)."""

    product: str
    kind: str  # "union" (an official union) or "wire" (a message's field, as "<message> <path>")
    name: str
    read: bool
    why: str


def facts(spec: Spec) -> tuple[Fact, ...]:
    """The classification of changes, table releases.facts: a union the gate reads and the table
    lacks counts as read, a wire field it lacks is read exactly when the contract's reading of a
    case changed."""
    return tuple(
        Fact(str(r["product"]), str(r["kind"]), str(r["name"]), bool(r["read"]), str(r["why"]))
        for r in spec.table("releases", "facts").rows
    )


def classifier(spec: Spec) -> Callable[[str, str, str], Fact | None]:
    """The row of table releases.facts for (product, kind, name), or None."""
    rows = {(f.product, f.kind, f.name): f for f in facts(spec)}
    return lambda product, kind, name: rows.get((product, kind, name))


def unread_union_names(spec: Spec, product: str) -> tuple[str, ...]:
    """The unions the contract does not read (their rows say so), compared only to name their
    changes (online, where the neighbour's package is installed beside the release's)."""
    return tuple(f.name for f in facts(spec) if (f.product, f.kind, f.read) == (product, "union", False))


def union_changes(spec: Spec, product: str, compared: list[Json]) -> list[Json]:
    """Each member a read union gained or lost against the spec's vocabulary at a neighbour."""
    changes = []
    fact = classifier(spec)
    for union in compared:
        known = fact(product, "union", union["name"])
        for how, members in (("added", union["added"]), ("removed", union["removed"])):
            changes += [
                {
                    "what": f"{union['name']}: {how} {member}",
                    "read": known.read if known else True,
                    "why": known.why if known else "a union the gate reads",
                }
                for member in members
            ]
    return changes


def unread_unions(spec: Spec, product: str, declarations: str) -> dict[str, list[str]]:
    """The members of the unions the contract does not read, from an ``sdk.d.ts``."""
    text = _COMMENTS.sub("", declarations)
    found: dict[str, list[str]] = {}
    for name in unread_union_names(spec, product):
        try:
            found[name] = _literals(_alias(text, name), f"{CLAUDE_TYPES_FILE} {name}")
        except UnionError:
            found[name] = []
    return found


def unread_changes(spec: Spec, product: str, old: dict[str, list[str]], new: dict[str, list[str]]) -> list[Json]:
    """Each member an unread union gained or lost between the neighbour's package and the release's."""
    changes = []
    fact = classifier(spec)
    for name, members in new.items():
        known = fact(product, "union", name)
        before = old.get(name, [])
        for how, names in (
            ("added", [m for m in members if m not in before]),
            ("removed", [m for m in before if m not in members]),
        ):
            changes += [
                {"what": f"{name}: {how} {m}", "read": known.read if known else True, "why": known.why if known else ""}
                for m in names
            ]
    return changes


# ---- carrying the decisions other entries took


def carry_decisions(spec: Spec, product: str, draft: Json) -> list[str]:
    """Fill each placeholder of ``draft`` that another entry of the spec already decided for the
    same member (its mapping row, its doc line, its decision) or the same catch-all; return the
    members whose decisions were carried, each with the entry it came from."""
    area = spec.areas[product]
    union = draft.get("union") or {}
    carried: list[str] = []
    table = MAPPING_TABLE[product]
    key = "variant" if product == "codex" else "category"
    for member in union.get("adds", ()):
        entry = next((e for e in area.versions if member in e.union.get("adds", ())), None)
        if entry is None:
            continue
        rows = draft.get("rows", {}).get(table, [])
        theirs = next((r for r in entry.rows.get(table, ()) if r.get(key) == member), None)
        for row in rows:
            if theirs is not None and row.get(key) == member:
                row.update({k: v for k, v in theirs.items() if is_placeholder(row.get(k)) or k not in row})
        if member in union.get("docs", {}) and member in entry.union.get("docs", {}):
            union["docs"][member] = entry.union["docs"][member]
        decided = next((d for d in entry.decisions if d["about"] == member), None)
        for index, mine in enumerate(draft.get("decisions", [])):
            if isinstance(mine, dict) and mine.get("about") == member and decided is not None:
                draft["decisions"][index] = dict(decided)
        carried.append(f"{member} (as {entry.version} decided)")
    catch_all = union.get("catch_all")
    if catch_all:
        label = catch_all_label(catch_all["schema"])
        entry = next(
            (
                e
                for e in area.versions
                if "catch_all" in e.union and catch_all_label(e.union["catch_all"]["schema"]) == label
            ),
            None,
        )
        if entry is not None:
            catch_all["category"] = entry.union["catch_all"]["category"]
            decided = next((d for d in entry.decisions if d["about"] == "catch_all"), None)
            draft["decisions"] = [
                dict(decided) if isinstance(d, dict) and d.get("about") == "catch_all" and decided else d
                for d in draft["decisions"]
            ]
            carried.append(f"the catch-all (as {entry.version} decided)")
    return carried


# ---- the gate


def release_check(
    spec: Spec,
    product: str,
    version: str,
    root: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
    source: Path | None = None,
    recordings: Path | None = None,
) -> tuple[Json, Json | None, Json | None]:
    """The report of a release the spec does not cover, its product-versions entry when it is
    equivalent to a covered neighbour, else its draft ``versions`` entry. Its wire is checked
    when ``recordings`` holds its recordings or it is installed (its cases recorded)."""
    version, unions, product_version, installed = read_unions(spec, product, version, root, log, source)
    area = spec.areas[product]
    neighbours = [n for n in covered_neighbours(area, version) if n is not None]
    compared: dict[str, Json] = {}
    for near in neighbours:
        report, _ = assess(spec, product, version, unions, product_version, near)
        compared[near] = {"unions": report["unions"], "changes": union_changes(spec, product, report["unions"])}
    equal = [n for n in neighbours if not any(c["read"] for c in compared[n]["changes"])]
    equivalent = equal[0] if equal else None
    base, draft = assess(spec, product, version, unions, product_version, neighbours[0] if neighbours else None)
    report = {**base, "covered_neighbours": neighbours, "compared": compared}
    unread: list[Json] = []
    wire: list[Json] | None = None
    fresh = _fresh(spec, product, version, installed, recordings)
    taken: dict[str, Json] | None = None  # the release's recordings, by case
    if fresh is not None:  # the wire too, against each neighbour whose unions are equal, in turn
        equivalent = None
        for near in equal:
            if installed is not None:
                theirs = _unread_of(spec, product, install(product, package(spec, product), near, root, log)[0])
                unread = unread_changes(spec, product, theirs, _unread_of(spec, product, installed))
            recorded = (area.entry_for(near) or area.versions[0]).recorded  # the neighbour range's recordings
            wire, taken = record_and_compare(
                spec.at({product: near}), product, recorded or near, fresh, log, classifier(spec)
            )
            if all(w["reading_equal"] for w in wire):
                equivalent = near
                break
        if equivalent is None and taken is None and neighbours:  # a draft: its wire facts, against its base
            base_entry = area.entry_for(base["nearest"]) or area.versions[0]
            at = spec.at({product: base["nearest"]})
            wire, taken = record_and_compare(
                at, product, base_entry.recorded or base["nearest"], fresh, log, classifier(spec)
            )
    report["unread_changes"] = unread
    report["wire"] = "not checked" if wire is None else wire
    report["equivalent_to"] = equivalent
    report["equal"] = equivalent is not None
    if equivalent is not None:
        evidence = {
            "source": (f"{report['package']}@{version} installed" if installed else f"--from {source}")
            + (f", its recordings read from {recordings}" if recordings else ""),
            "suite": conformance.__version__,
            "spec_version": spec.version,
            "neighbours": {
                n: ("equal" if not any(c["read"] for c in compared[n]["changes"]) else "differs") for n in neighbours
            },
            "unions": [
                {"name": u["name"], "source": u["source"], "members": u["official"]}
                for u in compared[equivalent]["unions"]
            ],
            **({"wire": wire} if wire is not None else {}),
            **({"product_version": product_version} if product_version else {}),
        }
        day = datetime.datetime.now(datetime.UTC).date().isoformat()
        entry = verified_entry(product, report["package"], version, equivalent, day, wire is not None, evidence)
        return report, entry, None
    assert draft is not None
    carried = carry_decisions(spec, product, draft)
    done = {c.split(" (as ", 1)[0] for c in carried}
    report["decisions"] = [
        line
        for line in base["decisions"]
        if line.split(":", 1)[0] not in done
        and not (line.startswith("the catch-all member") and "the catch-all" in done)
    ]
    if taken is not None:  # the wire facts its recordings show, carried where another range decided them
        facts = observed(spec, product, _cases(spec, product), taken)
        said = carry_wire(spec, product, base["nearest"], version, facts, draft)
        carried += [line for line in said if not line.startswith("open: ")]
        report["decisions"] = [
            *(line for line in report["decisions"] if not line.startswith(WIRE_DECISION)),
            *(line.removeprefix("open: ") for line in said if line.startswith("open: ")),
        ]
    report["carried"] = carried
    return report, None, draft


def _cases(spec: Spec, product: str) -> list[Case]:
    return [c for c in load_cases(spec) if c.product == product]


def _fresh(
    spec: Spec, product: str, version: str, installed: Installed | None, recordings: Path | None
) -> Fresh | None:
    """Where the release's recordings come from: read (``recordings``), recorded (installed), or
    nowhere (offline without them: the wire is not checked); each case taken once."""
    if recordings is not None:
        source = reader(spec, recordings, version)
    elif installed is not None:
        source = recorder(spec, installed)
    else:
        return None
    taken: dict[str, Json | None] = {}

    def fresh(case: Case) -> Json | None:
        if case.name not in taken:
            taken[case.name] = source(case)
        return taken[case.name]

    return fresh


def _unread_of(spec: Spec, product: str, installed: Installed) -> dict[str, list[str]]:
    file = installed.package_dir / CLAUDE_TYPES_FILE
    if product != "claude-code" or not file.is_file():
        return {}
    return unread_unions(spec, product, file.read_text(encoding="utf-8"))
