"""Product releases as the spec names them: their order, and the checks that a product area's
``versions`` ranges partition npm's list of releases (``product.releases``) exactly.

A ``versions`` entry is a range of real releases over which everything the contract reads (the
unions, the wire facts) is constant; ``releases`` lists each one it covers. A prerelease is a
release like any other: covered when it was measured and listed in the range its order puts it
in, never implied by a range's bounds. Imports nothing else of the suite: the model orders by
it, and releases.py (the release-day file) builds on the model.
"""

from __future__ import annotations

import re
from typing import Any

RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")

Path_ = tuple[str | int, ...]


def release_key(release: str) -> tuple[Any, ...]:
    """The semver order of ``release``: a prerelease sorts before its release, its dot-separated
    identifiers compared numerically where numeric (0.148.0-alpha.8 < 0.148.0 < 0.149.0)."""
    match = RELEASE.match(release)
    if match is None:
        return (float("inf"), release)
    major, minor, patch, pre = match.groups()
    parts: tuple[Any, ...] = (
        ((1,),) if pre is None else tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    )
    return (int(major), int(minor), int(patch), pre is None, parts)


def range_problems(raw: Any) -> list[tuple[Path_, str]]:
    """What is wrong with a product file's ranges, as (path in the file, message): an entry whose
    releases are unsorted or do not start with its ``version``; a release listed twice; an entry
    that overlaps or precedes the one before it; a release of ``product.releases`` that no entry
    covers and ``not_covered`` does not explain (a gap); a covered release npm's list lacks."""
    if not isinstance(raw, dict):
        return []
    entries = raw.get("versions") or []
    listing = (raw.get("product") or {}).get("releases") or {}
    wrong: list[tuple[Path_, str]] = []
    owner: dict[str, int] = {}
    last: str | None = None
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        releases = [str(r) for r in entry.get("releases") or [entry.get("version")] if r is not None]
        at: Path_ = ("versions", i, "releases")
        if releases and releases[0] != entry.get("version"):
            wrong.append((at, f"starts with {releases[0]}, not the entry's version {entry.get('version')}"))
        for k, release in enumerate(releases):
            if k and release_key(release) <= release_key(releases[k - 1]):
                wrong.append(((*at, k), f"{release} is not after {releases[k - 1]}: list the releases in order"))
            if release in owner:
                first = entries[owner[release]].get("version")
                wrong.append(
                    ((*at, k), f"{release} is already covered by the entry {first} (versions {owner[release]})")
                )
            else:
                owner[release] = i
        if releases and last is not None and release_key(releases[0]) <= release_key(last):
            wrong.append(
                (
                    ("versions", i, "version"),
                    f"{releases[0]} overlaps or precedes the range before it, which ends at {last}",
                )
            )
        if releases:
            last = releases[-1]
    listed = [str(r) for r in listing.get("versions") or []]
    excused = {str(r) for r in listing.get("not_covered") or {}}
    for k, release in enumerate(listed):
        if release not in owner and release not in excused:
            wrong.append(
                (
                    ("product", "releases", "versions", k),
                    f"{release} is in npm's list but no versions entry covers it "
                    "and not_covered does not say why (a gap between the ranges)",
                )
            )
        if release in owner and release in excused:
            wrong.append((("product", "releases", "not_covered", release), f"{release} is covered by a versions entry"))
    if listed:
        for release, i in owner.items():
            if release not in listed:
                k = [str(r) for r in entries[i].get("releases") or [entries[i].get("version")]].index(release)
                wrong.append((("versions", i, "releases", k), f"{release} is not in product.releases (npm's list)"))
    return wrong
