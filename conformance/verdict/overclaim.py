"""The over-claim hint (issue #30, item 6): when every test of one claimed settlement path,
selection binding or operation fails, the claim may be wider than the harness. The terminal and the
Markdown summary say so, and name the declaration key that narrows it (ADP-025, ADP-026): the
likelier mistake is a claim left wide (``settlements`` left out claims every path), not a harness
that gets every case of what it implements wrong."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

CLAIMED_PROPERTY = "claimed"  # a test's claims markers of the kinds below, as JSON pairs
CLAIMS_MARKER = "claims"  # conformance/plugin.py CLAIMS_MARKER (conformance/conftest.py checks it)

# Kind of claim (the claims marker's first argument, the declaration key) -> what one value is.
_KINDS = {
    "settlements": "settlement path",
    "bindings": "selection binding",
    "operations": "operation",
}
_ABSENT = {
    "settlements": "leaving `settlements` out claims every path its bindings take",
    "operations": "leaving `operations` out claims every operation its claims require",
}


def claimed_pairs(item: pytest.Item) -> str:
    """The (kind, value) claims of a test that this hint watches, as a report property's value."""
    pairs = {(str(m.args[0]), str(m.args[1])) for m in item.iter_markers(CLAIMS_MARKER) if len(m.args) >= 2}
    return json.dumps(sorted(p for p in pairs if p[0] in _KINDS))


def pairs_of(value: object) -> list[tuple[str, str]]:
    return [(str(kind), str(claim)) for kind, claim in json.loads(str(value))]


def over_claims(
    tests: Iterable[Mapping[str, Any]], claimed: Mapping[str, list[tuple[str, str]]], declaration: Mapping[str, Any]
) -> list[str]:
    """One line per claimed value every one of whose tests that ran failed (``tests``: the report's
    tests; ``claimed``: each node id's claims pairs). Tests skipped, not applicable or expected to
    fail do not count either way."""
    ran: dict[tuple[str, str], list[bool]] = {}
    of: dict[tuple[str, str], list[str]] = {}
    for test in tests:
        outcome = test.get("outcome")
        if outcome not in ("passed", "failed", "error"):
            continue
        for pair in claimed.get(str(test.get("nodeid")), ()):
            ran.setdefault(pair, []).append(outcome != "passed")
            of.setdefault(pair, []).append(str(test.get("nodeid")))
    wide = {pair for pair, failed in ran.items() if failed and all(failed)}
    # A path claimed too wide explains the failures of a binding or operation only it exercised:
    # `settlements` is the narrowest key, so only it is named for them.
    paths = {pair for pair in wide if pair[0] == "settlements"}
    explained = {nodeid for pair in paths for nodeid in of[pair]}
    lines = []
    for kind, value in sorted(wide):
        failed = ran[(kind, value)]
        if kind != "settlements" and paths and set(of[(kind, value)]) <= explained:
            continue
        absent = f"; {_ABSENT[kind]}" if kind in _ABSENT and kind not in declaration else ""
        lines.append(
            f"every test of claimed {_KINDS[kind]} {value} failed ({len(failed)} test(s)): the claim may be wider "
            f"than the harness. If it does not implement {value}, narrow the claim with the declaration key "
            f"`{kind}`{absent} (ADP-025, ADP-026)"
        )
    return lines
