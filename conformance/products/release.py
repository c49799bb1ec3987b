"""Release day: the upgrade gate for a product release the spec does not cover yet.

``upgrade-check`` compares the release's official unions with those of both covered neighbours
(the nearest covered release below it and above it); online it also installs the release and
records every real-products case against the loopback fakes, and reads each recording as the
contract does, beside the neighbour's recording. Every difference is named and classified, as
oasdiff classifies API changes as breaking or not, by :data:`FACTS` (data, not code): whether
the contract reads it. Nothing the contract reads changed: the release is equivalent to the
neighbour, and ``--write-versions FILE`` records it (conformance/spec/releases.py) for a run to
test it under the neighbour's contract. Something did: a draft ``versions`` entry over the
neighbour below, carrying every decision another entry of the spec already took for the same
member (:func:`carry_decisions`), so that only new decisions are left open.
"""

from __future__ import annotations

import datetime
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import conformance
from conformance.areas.claude_code.oracle import expected_outcome
from conformance.products.draft import MAPPING_TABLE, catch_all_label
from conformance.products.packages import Installed, install
from conformance.products.recordings import (
    SDK_INTERNAL_TYPES,
    load_cases,
    load_recording,
    recording_file,
    recordings_dir,
)
from conformance.products.replay import claude_code_scenario, codex_scenario, codex_terminal
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
from conformance.spec import Spec
from conformance.spec.crosscheck import is_placeholder
from conformance.spec.releases import covered_neighbours, verified_entry

Json = Any


@dataclass(frozen=True)
class Fact:
    """One thing a release can change, and whether the contract reads it (and why)."""

    product: str
    kind: str  # "union" (an official union) or "wire" (a message's field, as "<message> <path>")
    name: str
    read: bool
    why: str


FACTS: tuple[Fact, ...] = (
    Fact("codex", "union", "CodexErrorInfo", True, "each member is a variant the provider maps (table variants)"),
    Fact(
        "codex",
        "union",
        "CodexErrorInfo variants with httpStatusCode",
        True,
        "a variant with a status keeps it in the diagnostic (table http_status_forms)",
    ),
    Fact("claude-code", "union", "SDKResultMessage.subtype", True, "the classification reads each result subtype"),
    Fact("claude-code", "union", "SDKResultError.subtype", True, "each error subtype is a category of its own"),
    Fact(
        "claude-code",
        "union",
        "SDKAssistantMessageError",
        False,
        "an assistant message's error is never read: the result message decides the run (CC-007)",
    ),
    Fact("claude-code", "wire", "result written_at", False, "a timestamp; the classification reads no time"),
    Fact("claude-code", "wire", "system written_at", False, "a timestamp on system/init, which never decides"),
)
"""The classification of changes; a union the gate reads and this table lacks counts as read, a
wire field it lacks is read exactly when the contract's reading of a case changed."""

UNREAD_UNIONS = {"claude-code": ("SDKAssistantMessageError",), "codex": ()}
"""Unions the contract does not read, compared only to name their changes (online, where the
neighbour's package is installed beside the release's)."""


def fact(product: str, kind: str, name: str) -> Fact | None:
    return next((f for f in FACTS if (f.product, f.kind, f.name) == (product, kind, name)), None)


def union_changes(product: str, compared: list[Json]) -> list[Json]:
    """Each member a read union gained or lost against the spec's vocabulary at a neighbour."""
    changes = []
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


def unread_unions(product: str, declarations: str) -> dict[str, list[str]]:
    """The members of the unions the contract does not read, from an ``sdk.d.ts``."""
    text = _COMMENTS.sub("", declarations)
    found: dict[str, list[str]] = {}
    for name in UNREAD_UNIONS.get(product, ()):
        try:
            found[name] = _literals(_alias(text, name), f"{CLAUDE_TYPES_FILE} {name}")
        except UnionError:
            found[name] = []
    return found


def unread_changes(product: str, old: dict[str, list[str]], new: dict[str, list[str]]) -> list[Json]:
    """Each member an unread union gained or lost between the neighbour's package and the release's."""
    changes = []
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


# ---- the wire: a recording as the contract reads it


def reading(spec: Spec, product: str, recording: Json) -> Json:
    """What the contract reads of a recording: Codex, the terminal turn's status and
    codexErrorInfo; Claude Code, the result the spec's classification gives its messages."""
    if product == "codex":
        turn = codex_terminal(codex_scenario(recording)) or {}
        return {
            "turn.status": turn.get("status"),
            "turn.error.codexErrorInfo": (turn.get("error") or {}).get("codexErrorInfo"),
        }
    return {"result": expected_outcome(spec, claude_code_scenario(recording))}


def _paths(value: Json, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        found = set()
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            found |= {path} | _paths(item, path)
        return found
    if isinstance(value, list):
        return set().union(*(_paths(item, f"{prefix}[]") for item in value)) if value else set()
    return set()


def shapes(product: str, recording: Json) -> dict[str, set[str]]:
    """The field paths of each kind of message the product wrote (Codex: by method; Claude Code: by type)."""
    found: dict[str, set[str]] = {}
    for item in recording["wire"]:
        frame = item.get("stdout")
        if not isinstance(frame, dict):
            continue
        label = frame.get("method") if product == "codex" else frame.get("type")
        if not isinstance(label, str) or label in SDK_INTERNAL_TYPES:
            continue
        found.setdefault(label, set()).update(_paths(frame))
    return found


def compare_recordings(spec: Spec, product: str, case: str, old: Json, new: Json) -> Json:
    """One case's recording at the release against the neighbour's: the contract's reading of
    each, and every field path a kind of message gained or lost, classified by :data:`FACTS`."""
    before, after = reading(spec, product, old), reading(spec, product, new)
    same = before == after
    old_shapes, new_shapes = shapes(product, old), shapes(product, new)
    changes = []
    for label in sorted(set(old_shapes) | set(new_shapes)):
        was, now = old_shapes.get(label, set()), new_shapes.get(label, set())
        for how, paths in (("added", sorted(now - was)), ("removed", sorted(was - now))):
            for path in paths:
                known = fact(product, "wire", f"{label} {path}")
                read = known.read if known else not same
                why = (
                    known.why
                    if known
                    else ("the reading of the case changed" if not same else "the reading of the case is unchanged")
                )
                changes.append({"what": f"{case}: {label} message {how} field {path}", "read": read, "why": why})
    if not same:
        changes.insert(
            0,
            {
                "what": f"{case}: the contract reads {after!r}, at the neighbour {before!r}",
                "read": True,
                "why": "the reading of the case changed",
            },
        )
    return {"case": case, "reading_equal": same, "changes": changes}


def record_and_compare(
    spec: Spec, product: str, neighbour: str, installed: Installed, log: Callable[[str], None]
) -> list[Json]:
    """Record every case of ``product`` at the installed release under ``spec`` (the contract at
    ``neighbour``), each compared with the neighbour's committed recording."""
    from conformance.products.recorder import RecordingError, record_case, running_as_root

    compared = []
    for case in (c.at(spec) for c in load_cases(spec) if c.product == product):
        if case.as_root and not running_as_root():
            compared.append(
                {"case": case.name, "reading_equal": True, "changes": [], "skipped": "records as root only"}
            )
            continue
        path = recording_file(product, neighbour, case.name, recordings_dir())
        if not path.is_file():
            compared.append(
                {
                    "case": case.name,
                    "reading_equal": False,
                    "changes": [
                        {
                            "what": f"{case.name}: no recording at {neighbour} ({path})",
                            "read": True,
                            "why": "nothing to compare with",
                        }
                    ],
                }
            )
            continue
        log(f"recording {case.id} at {installed.version}")
        try:
            with tempfile.TemporaryDirectory(prefix=f"release-{case.id}-") as folder:
                fresh = record_case(spec, case, installed, Path(folder))
        except RecordingError as exc:
            compared.append(
                {
                    "case": case.name,
                    "reading_equal": False,
                    "changes": [{"what": f"{case.name}: {exc}", "read": True, "why": "the case did not record"}],
                }
            )
            continue
        entry = compare_recordings(spec, product, case.name, load_recording(spec, path), fresh)
        compared.append({**entry, "neighbour_recording": str(path)})
    return compared


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
) -> tuple[Json, Json | None, Json | None]:
    """The report of a release the spec does not cover, its product-versions entry when it is
    equivalent to a covered neighbour, else its draft ``versions`` entry."""
    version, unions, product_version, installed = read_unions(spec, product, version, root, log, source)
    area = spec.areas[product]
    neighbours = [n for n in covered_neighbours(area, version) if n is not None]
    compared: dict[str, Json] = {}
    for near in neighbours:
        report, _ = assess(spec, product, version, unions, product_version, near)
        compared[near] = {"unions": report["unions"], "changes": union_changes(product, report["unions"])}
    equivalent = next((n for n in neighbours if not any(c["read"] for c in compared[n]["changes"])), None)
    base, draft = assess(spec, product, version, unions, product_version, neighbours[0] if neighbours else None)
    report = {**base, "covered_neighbours": neighbours, "compared": compared}
    unread: list[Json] = []
    wire: list[Json] | None = None
    if installed is not None and equivalent is not None:
        at = spec.at({product: equivalent})
        mine = _unread_of(product, installed)
        theirs = _unread_of(product, install(product, package(spec, product), equivalent, root, log)[0])
        unread = unread_changes(product, theirs, mine)
        wire = record_and_compare(at, product, equivalent, installed, log)
        if not all(w["reading_equal"] for w in wire):
            equivalent = None
    report["unread_changes"] = unread
    report["wire"] = "not checked" if wire is None else wire
    report["equivalent_to"] = equivalent
    report["equal"] = equivalent is not None
    if equivalent is not None:
        evidence = {
            "source": f"{report['package']}@{version} installed" if installed else f"--from {source}",
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
    done = {c.split(" ", 1)[0] for c in carried}
    report["decisions"] = [line for line in base["decisions"] if line.split(":", 1)[0] not in done]
    report["carried"] = carried
    return report, None, draft


def _unread_of(product: str, installed: Installed) -> dict[str, list[str]]:
    file = installed.package_dir / CLAUDE_TYPES_FILE
    return (
        unread_unions(product, file.read_text(encoding="utf-8")) if product == "claude-code" and file.is_file() else {}
    )


def render_release(report: Json) -> str:
    """The human form of a release check."""
    version, product = report["version"], report["product"]
    neighbours = report["covered_neighbours"]
    lines = [
        f"upgrade-check {product}: {report['package']} {version}, which the spec does not cover; compared with "
        f"the covered neighbour(s) {', '.join(neighbours) or 'none'}"
    ]
    for near, seen in report["compared"].items():
        changes = seen["changes"]
        lines.append(f"against {near}: " + ("unions equal" if not changes else f"{len(changes)} change(s)"))
        lines += [f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})" for c in changes]
    for c in report["unread_changes"]:
        lines.append(f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})")
    if report["wire"] == "not checked":
        lines.append("wire: not checked (the unions were read offline, --from)")
    else:
        for case in report["wire"]:
            state = "reads the same" if case["reading_equal"] else "DIFFERS"
            lines.append(f"wire {case['case']}: {case.get('skipped') or state}")
            lines += [f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})" for c in case["changes"]]
    near = report["equivalent_to"]
    if near is not None:
        lines.append(f"EQUIVALENT: nothing the contract reads changed; {version} is tested as {near}")
        if "versions_file" in report:
            lines.append(
                f"wrote {report['versions_file']}; claim {product} {version} and run "
                f"`python -m pytest --pyargs conformance --product-versions={report['versions_file']} ...`"
            )
        else:
            lines.append("pass --write-versions FILE to record it, then run pytest with --product-versions=FILE")
        return "\n".join(lines)
    lines.append(
        f"CHANGED: {version} changes what the contract reads"
        + (f"; wrote a draft versions entry to {report['draft']}" if "draft" in report else "")
    )
    if report.get("carried"):
        lines.append("Carried from the spec's other entries: " + ", ".join(report["carried"]))
    lines.append("Decisions a person must take before it ships (placeholders in the draft):")
    lines += [f"  {n}. {line}" for n, line in enumerate(report["decisions"], 1)]
    return "\n".join(lines)
