"""REL-001's table `releases.facts` is what the gate reads: each row classifies its own changes,
and a recording is compared as the contract reads it (split from test_release_day.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.products.recordings import load_recording, recording_file
from conformance.products.release import classifier, facts, union_changes, unread_changes, unread_unions
from conformance.products.release_wire import compare_recordings
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.test_upgrade_gate import DATA

SPEC = load_spec()
CLAUDE_DTS = DATA / "claude-agent-sdk-0.3.332.d.ts"


@pytest.mark.requirement("REL-001")
def test_changes_are_classified_by_the_table_of_what_the_contract_reads() -> None:
    """SDKAssistantMessageError and written_at are not read; union members and result subtypes are."""
    assert {(f.name, f.read) for f in facts(SPEC) if f.product == "claude-code" and f.kind == "union"} == {
        ("SDKResultMessage.subtype", True),
        ("SDKResultError.subtype", True),
        ("SDKAssistantMessageError", False),
    }
    declared = "/** the errors */\nexport type SDKAssistantMessageError = 'authentication_failed' | 'rate_limit' | "
    declared += "'unknown';\n"
    old = unread_unions(SPEC, "claude-code", CLAUDE_DTS.read_text(encoding="utf-8") + declared)
    assert old["SDKAssistantMessageError"] == ["authentication_failed", "rate_limit", "unknown"]
    new = {"SDKAssistantMessageError": [*old["SDKAssistantMessageError"], "quota_exceeded"]}
    [change] = unread_changes(SPEC, "claude-code", old, new)
    assert change["what"] == "SDKAssistantMessageError: added quota_exceeded" and change["read"] is False


@pytest.mark.parametrize(
    ("edit", "read", "reading_equal"),
    [
        (lambda m: m.update(written_at="2026-12-02T00:00:00Z"), False, True),
        (lambda m: m.update(subtype="error_during_execution", is_error=True), True, False),
    ],
    ids=["written_at", "subtype"],
)
@pytest.mark.requirement("REL-001")
def test_a_recording_is_compared_as_the_contract_reads_it(edit: Any, read: bool, reading_equal: bool) -> None:
    at = SPEC.at({"claude-code": "0.3.332"})
    old = load_recording(at, recording_file("claude-code", "0.3.332", "answer", fixtures_dir() / "recordings"))
    new = json.loads(json.dumps(old))
    results = [  # the CLI's frame and the message query() yielded for it (byte-identical on the real SDK)
        i[k]
        for i in new["wire"]
        for k in ("stdout", "message")
        if isinstance(i.get(k), dict) and i[k].get("type") == "result"
    ]
    assert len(results) == 2
    for result in results:
        edit(result)
    compared = compare_recordings(at, "claude-code", "answer", old, new, classifier(at))
    assert compared["reading_equal"] is reading_equal
    assert compared["changes"] and all(c["read"] is read for c in compared["changes"]), compared
    assert compare_recordings(at, "claude-code", "answer", old, old, classifier(at)) == {
        "case": "answer",
        "reading_equal": True,
        "changes": [],
    }


@pytest.mark.requirement("REL-001")
@pytest.mark.parametrize(
    "row",
    [pytest.param(f, marks=pytest.mark.reaches("releases.facts", i), id=f.name) for i, f in enumerate(facts(SPEC))],
)
def test_each_row_of_the_facts_table_classifies_its_own_changes(row: Any) -> None:
    """Every row decides: a member its union gains, or a value its wire field takes, is read as the row says."""
    if row.kind == "union":
        changes = union_changes(SPEC, row.product, [{"name": row.name, "added": ["zzNew"], "removed": []}])
        assert changes and all(c["read"] is row.read and c["why"] == row.why for c in changes), changes
        return
    assert row.product == "claude-code", "a wire row of another product needs its own recording edit here"
    kind, field = row.name.split(" ", 1)
    at = SPEC.at({"claude-code": "0.3.332"})
    old = load_recording(at, recording_file("claude-code", "0.3.332", "answer", fixtures_dir() / "recordings"))
    new = json.loads(json.dumps(old))
    edited = [
        i[k].update({field: "2030-01-01T00:00:00Z"}) or i[k]
        for i in new["wire"]
        for k in ("stdout", "message")
        if isinstance(i.get(k), dict) and i[k].get("type") == kind
    ]
    assert edited, f"the answer recording holds no {kind} message to edit"
    compared = compare_recordings(at, "claude-code", "answer", old, new, classifier(at))
    assert compared["changes"] and all(c["read"] is row.read for c in compared["changes"]), compared
    if not row.read:  # a field the contract does not read never changes the reading
        assert compared["reading_equal"] is True
