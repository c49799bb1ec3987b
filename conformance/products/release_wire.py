"""Release day's wire check: a release's recordings of the real-products cases beside its covered
neighbour's, read as the contract reads them (conformance/products/release.py runs it online).

What the contract reads of a recording is what the spec's reading of it gives: for Codex the
terminal turn's status and codexErrorInfo, for Claude Code the result the classification gives
its messages. Beside it, every field path a kind of message gained or lost is named, classified
by table releases.facts (spec/releases.yaml) where it has a row (``written_at`` is not read), else read exactly when the
reading of the case changed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.areas.claude_code.oracle import expected_outcome
from conformance.products.packages import Installed
from conformance.products.recordings import (
    Case,
    load_cases,
    load_recording,
    recording_file,
    recordings_dir,
)
from conformance.products.replay import claude_code_scenario, codex_scenario, codex_terminal
from conformance.spec import Spec

Json = Any
Classify = Callable[[str, str, str], Any]  # (product, kind, name) -> a Fact or None


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
    """The field paths of each kind of message the product wrote (Codex: each stdout frame, by
    method; Claude Code: each message the real SDK's query() yielded, by type, so the CLI's
    control and host-only frames, which a provider never sees, are not compared)."""
    found: dict[str, set[str]] = {}
    for item in recording["wire"]:
        frame = item.get("stdout") if product == "codex" else item.get("message")
        if not isinstance(frame, dict):
            continue
        label = frame.get("method") if product == "codex" else frame.get("type")
        if not isinstance(label, str):
            continue
        found.setdefault(label, set()).update(_paths(frame))
    return found


def compare_recordings(spec: Spec, product: str, case: str, old: Json, new: Json, fact: Classify) -> Json:
    """One case's recording at the release against the neighbour's: the contract's reading of
    each, and every field path a kind of message gained or lost, classified by table releases.facts."""
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


Fresh = Callable[[Case], Json | None]
"""A release's recording of a case (None: not recordable here); raises RecordingError."""


def recorder(spec: Spec, installed: Installed) -> Fresh:
    """Record each case at the installed release (a case that records as root only: None, unless root)."""
    from conformance.products.recorder import record_case, running_as_root

    def fresh(case: Case) -> Json | None:
        if case.as_root and not running_as_root():
            return None
        with tempfile.TemporaryDirectory(prefix=f"release-{case.id}-") as folder:
            return record_case(spec, case, installed, Path(folder))

    return fresh


def reader(spec: Spec, folder: Path, version: str) -> Fresh:
    """Read each case's recording at ``version`` from ``folder`` (laid out as fixtures/recordings,
    as `products record --version V --output DIR` writes it) instead of recording it."""
    from conformance.products.recorder import RecordingError

    def fresh(case: Case) -> Json | None:
        path = recording_file(case.product, version, case.name, folder)
        if not path.is_file():
            if case.as_root:
                return None
            raise RecordingError(f"no recording {path}")
        return load_recording(spec, path)

    return fresh


def record_and_compare(
    spec: Spec, product: str, neighbour: str, fresh: Fresh, log: Callable[[str], None], fact: Classify
) -> tuple[list[Json], dict[str, Json]]:
    """Each case of ``product`` at the release (``fresh``: recorded under ``spec``, the contract at
    the covered neighbour, or read) compared with the committed recording at ``neighbour``: the
    release its range recorded (``recorded``), since a range keeps one release's recordings.
    Returns the comparisons and the release's recordings by case name."""
    from conformance.products.recorder import RecordingError

    compared: list[Json] = []
    recordings: dict[str, Json] = {}
    for case in (c.at(spec) for c in load_cases(spec) if c.product == product):
        path = recording_file(product, neighbour, case.name, recordings_dir())
        log(f"recording {case.id}")
        try:
            recording = fresh(case)
        except RecordingError as exc:
            compared.append(
                {
                    "case": case.name,
                    "reading_equal": False,
                    "changes": [{"what": f"{case.name}: {exc}", "read": True, "why": "the case did not record"}],
                }
            )
            continue
        if recording is None:
            compared.append(
                {"case": case.name, "reading_equal": True, "changes": [], "skipped": "records as root only"}
            )
            continue
        recordings[case.name] = recording
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
        entry = compare_recordings(spec, product, case.name, load_recording(spec, path), recording, fact)
        compared.append({**entry, "neighbour_recording": str(path)})
    return compared, recordings
