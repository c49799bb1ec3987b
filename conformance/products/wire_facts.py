"""Release day's wire facts: what a release's recordings show of the facts an entry's ``wire``
records (spec/codex.yaml, spec/claude-code.yaml), and carrying into a draft the decision another
range of the spec already took for the same fact, so only genuinely new wire facts stay open.

A fact is one leaf ``(key, sub)`` of a ``wire`` mapping: Codex ``failures.<case>`` (the terminal
codexErrorInfo a failure case gets) and ``turn_error.<field>`` (a field every turn error carries
beyond the base's message, codexErrorInfo and additionalDetails); Claude Code
``startup_failure_results`` (the variable that asks for a start-up failure result, and the result
written for each startup_failure_reason). A release's fact that differs from the draft's base
(the covered neighbour below) goes into the draft: with the decision of the entry whose own
``wire`` has the same value, the range it came from named in its sources, else as a placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.products.draft import placeholder
from conformance.products.recordings import Case
from conformance.products.replay import codex_scenario, codex_terminal
from conformance.spec import Spec
from conformance.spec.model import ProductVersion

Json = Any
Fact = tuple[str, str]

BASE_TURN_ERROR = frozenset({"message", "codexErrorInfo", "additionalDetails"})
"""The fields of a Codex turn error at the base (0.147.0's recordings): a field beyond them is a
``turn_error`` fact."""

_RESULT_FIELDS = ("type", "subtype", "is_error", "startup_failure_reason")
"""What a start-up failure result's wire fact records of the result message."""


def observed(
    spec: Spec, product: str, cases: list[Case], recordings: Mapping[str, Json]
) -> tuple[dict[Fact, Json], set[str]]:
    """The wire facts the recordings of a release show (by case name; a case not recorded shows
    none), and the ``wire`` keys whose every fact they would show (so a fact of such a key they
    lack went away)."""
    facts: dict[Fact, Json] = {}
    seen: set[str] = set()
    failures = {sub for e in spec.areas[product].versions for sub in (e.wire.get("failures") or {})}
    for case in cases:
        recording = recordings.get(case.name)
        if recording is None:
            continue
        if product == "codex":
            error = (codex_terminal(codex_scenario(recording)) or {}).get("error") or {}
            if case.name in failures:
                facts["failures", case.name] = error.get("codexErrorInfo")
            seen |= {"turn_error"} if error else set()
            facts |= {("turn_error", k): v for k, v in error.items() if k not in BASE_TURN_ERROR}
            continue
        seen |= {"startup_failure_results"} if case.env else set()
        for item in recording["wire"]:
            message = item.get("message")
            if isinstance(message, dict) and message.get("type") == "result" and message.get("startup_failure_reason"):
                for variable in case.env:
                    facts["startup_failure_results", "env"] = variable
                reason = str(message["startup_failure_reason"])
                facts["startup_failure_results", reason] = {k: message[k] for k in _RESULT_FIELDS if k in message}
    return facts, seen


def _leaves(wire: Mapping[str, Json]) -> dict[Fact, Json]:
    return {(k, sub): v for k, value in wire.items() if isinstance(value, dict) for sub, v in value.items()}


_ABSENT = object()


def _same(a: Json, b: Json) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def carry_wire(
    spec: Spec, product: str, base: str, version: str, recorded_facts: tuple[dict[Fact, Json], set[str]], draft: Json
) -> list[str]:
    """Put into ``draft`` (a delta over covered ``base``) every fact of ``version`` that differs
    from ``base``'s wire: decided, with the decision of the entry whose own ``wire`` records the
    same value (the nearest after ``base`` first) and that range named as evidence; else open.
    Returns what was carried and, as ``"open: ..."``, the decision line of each new fact and of
    each fact of ``base`` the recordings should show and do not."""
    facts, seen = recorded_facts
    area = spec.areas[product]
    known = _leaves(spec.at({product: base}).areas[product].wire)
    gone = [f for f in known if f[0] in seen and f not in facts]
    changed = {f: v for f, v in facts.items() if f not in known or not _same(known[f], v)}
    below = area.versions.index(area.entry_for(base) or area.versions[0])
    order = [*area.versions[below + 1 :], *reversed(area.versions[: below + 1])]
    wire: dict[str, dict[str, Json]] = {}
    decided: dict[str, list[tuple[Fact, ProductVersion | None]]] = {}
    for (key, sub), value in sorted(changed.items()):
        wire.setdefault(key, {})[sub] = value
        owner = next(
            (e for e in order if (key, sub) in _leaves(e.wire) and _same(_leaves(e.wire)[key, sub], value)), None
        )
        decided.setdefault(key, []).append(((key, sub), owner))
    draft.pop("wire", None)
    if wire:
        draft["wire"] = wire  # the recorded facts; a person adds none, so no placeholder key
    decisions = [d for d in draft.get("decisions", []) if not (isinstance(d, str) and "wire.<key>" in d)]
    said: list[str] = []
    for key, found in decided.items():
        owners = {o.version for _, o in found if o is not None}
        owner = next((o for _, o in found if o is not None), None)
        shown = ", ".join(f"{k}.{s} = {json.dumps(facts[k, s])}" for (k, s), _ in found)
        recorded = {"product": f"upgrade-check: the recordings of {version} show wire.{shown}"}
        theirs = next((d for d in owner.decisions if d.get("about") == f"wire.{key}"), None) if owner else None
        if owner is not None and theirs is not None and len(owners) == 1 and all(o for _, o in found):
            evidence = {
                "product": f"spec entry {owner.version} (range {owner.span}) decided the same wire.{key} facts: {shown}"
            }
            decisions.append({**theirs, "sources": [*theirs.get("sources", []), recorded, evidence]})
            said.append(f"wire.{key} (as {owner.version} decided)")
            continue
        was = ", ".join(f"{k}.{s} = {json.dumps(known[k, s]) if (k, s) in known else 'absent'}" for (k, s), _ in found)
        decisions.append(
            {
                "about": f"wire.{key}",
                "decision": placeholder(f"what the contract makes of wire.{shown} (at {base}: {was})"),
                "sources": [recorded, placeholder("the evidence")],
            }
        )
        said.append(
            f"open: wire.{key}: {version} records {shown} (at {base}: {was}); decide what the contract makes of it"
        )
    said += [
        f"open: wire.{key}.{sub}: {base} has it ({json.dumps(known[key, sub])}), {version}'s recordings do not; "
        "a versions entry cannot say a fact went away: ask the maintainers"
        for key, sub in gone
    ]
    draft.pop("decisions", None)
    draft["decisions"] = decisions  # after wire, as the spec's entries order them
    return said
