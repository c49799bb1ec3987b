"""Tier 2, the adapter protocol: a pure operation answers the same whatever was called before
(ADP-014), and an exec adapter's exchange holds the exec protocol (ADP-015..ADP-017).

The inputs are the spec's golden vectors of every pure operation (``VECTOR_CALLS`` says which
table feeds which operation, and which claim makes a vector applicable); the expected answers
are the adapter's own first answers, asked for again in reverse order, so that every call
follows another call than the first time (the last one: itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.areas.diagnostic.oracle import product
from conformance.harness.adapter import Adapter
from conformance.harness.claims import Claims
from conformance.harness.exec_adapter import ExecTarget
from conformance.spec import Spec, expand_text
from conformance.verdict.report import NOT_APPLICABLE

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset(
    {
        "bound_diagnostic",
        "claude_code_outcome",
        "codex_outcome",
        "fold_output",
        "format_diagnostic",
        "job_notice",
        "job_outcome",
        "job_output",
        "render_tool_result",
        "select_output",
        "settle_run",
        "settlement_notice",
    }
)

Json = dict[str, Any]
Declaration = dict[str, Any]


def _events(row: Json) -> Json | None:
    """select_output's input for a selection vector: only event bindings, only events."""
    events = [step["event"] for step in row["steps"] if "event" in step]
    if row["binding"] == "text-stream" or len(events) != len(row["steps"]):
        return None
    return {"binding": row["binding"], "events": events}


def _bindings(key: Callable[[Json], str]) -> Callable[[Spec, Declaration, Json], bool]:
    return lambda spec, claims, row: key(row) in claims["bindings"]


def _provider(area: str) -> Callable[[Spec, Declaration, Json], bool]:
    return lambda spec, claims, row: area in claims["providers"]


def _background(mode: str) -> Callable[[Spec, Declaration, Json], bool]:
    return lambda spec, claims, row: mode in claims.get("background", ())


@dataclass(frozen=True)
class VectorCall:
    """How the rows of one golden-vector table call one operation: its input, the output the
    row expects (None where the row fixes none for this operation), and when it applies."""

    area: str
    table: str
    op: str
    input: Callable[[Json], Any]
    output: Callable[[Json], Any]
    applies: Callable[[Spec, Declaration, Json], bool]

    def rows(self, spec: Spec) -> Iterator[Json]:
        yield from spec.table(self.area, self.table).rows


VECTOR_CALLS = [
    VectorCall(
        "selection",
        "golden_vectors",
        "fold_output",
        lambda row: {"binding": row["binding"], "steps": row["steps"]},
        lambda row: None,  # the vector fixes the last collected value only
        _bindings(lambda row: str(row["binding"])),
    ),
    VectorCall(
        "selection",
        "golden_vectors",
        "select_output",
        _events,
        lambda row: row["expected"],
        _bindings(lambda row: str(row["binding"])),
    ),
    VectorCall(
        "results",
        "settle_vectors",
        "settle_run",
        lambda row: row["input"],
        lambda row: row["expected"],
        _bindings(lambda row: str(row["input"]["binding"])),
    ),
    VectorCall(
        "results",
        "render_vectors",
        "render_tool_result",
        lambda row: row["result"],
        lambda row: row["expected"],
        lambda spec, claims, row: bool(claims["bindings"]),
    ),
    VectorCall(
        "background",
        "job_vectors",
        "job_outcome",
        lambda row: row["input"],
        lambda row: row["outcome"],
        _background("job"),
    ),
    VectorCall(
        "background",
        "job_vectors",
        "job_output",
        lambda row: row["input"],
        lambda row: {"text": row["text"]},
        _background("job"),
    ),
    VectorCall(
        "background",
        "completion_vectors",
        "job_notice",
        lambda row: row["input"],
        lambda row: row["expected"],
        _background("job"),
    ),
    VectorCall(
        "background",
        "notice_vectors",
        "settlement_notice",
        lambda row: row["input"],
        lambda row: row["expected"],
        _background("notice"),
    ),
    VectorCall(
        "diagnostic",
        "line_vectors",
        "format_diagnostic",
        lambda row: {"kind": row["kind"], "facts": row["facts"]},
        lambda row: {"text": expand_text(row["expected"])},
        lambda spec, claims, row: product(spec, row["facts"]["product"]).area in claims["providers"],
    ),
    VectorCall(
        "diagnostic",
        "bound_vectors",
        "bound_diagnostic",
        lambda row: {"text": expand_text(row["input"])},
        lambda row: {"text": expand_text(row["expected"])},
        lambda spec, claims, row: True,  # wherever the adapter implements it (Claims.unclaimed)
    ),
    VectorCall(
        "claude-code",
        "outcome_vectors",
        "claude_code_outcome",
        lambda row: row["scenario"],
        lambda row: row["expected"],
        _provider("claude-code"),
    ),
    VectorCall(
        "codex",
        "outcome_vectors",
        "codex_outcome",
        lambda row: row["scenario"],
        lambda row: row["expected"],
        _provider("codex"),
    ),
]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 400 else text[:400] + "…"


def _claimed_calls(adapter: Adapter, spec: Spec) -> list[tuple[str, str, Any]]:
    """(what, operation, input) of every golden vector of what the adapter claims."""
    claimed = Claims.of(adapter.declaration, spec)
    return [
        (f"{c.op} of {c.area}.{c.table} row {row['name']!r}", c.op, value)
        for c in VECTOR_CALLS
        for row in c.rows(spec)
        if c.applies(spec, adapter.declaration, row)
        and (value := c.input(row)) is not None
        and claimed.unclaimed(c.op, value) is None
    ]


@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-017")
def test_exec_exchange_holds_the_protocol(adapter: Adapter, spec: Spec) -> None:
    """An exec adapter's process described itself first (ADP-017), and answers calls with one
    JSON object line each whose id is the request's (ADP-015, ADP-016): the exchange of this run
    enforces all three on every line, so a call answered here shows them held (a broken line
    fails the call, blamed by conformance/harness/exec_adapter.py)."""
    if not isinstance(adapter.target, ExecTarget):
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} is not an exec adapter (the exec protocol is not used)")
    calls = _claimed_calls(adapter, spec)
    if not calls:
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no pure operation that has golden vectors")
    for _, op, value in calls[:3]:
        adapter.call(op, value)


@pytest.mark.requirement("ADP-014")
def test_pure_operations_answer_alike_whatever_came_before(adapter: Adapter, spec: Spec) -> None:
    """Over the vectors of what the adapter claims: operations it implements, and inputs of claimed
    bindings and settlement paths (conformance/harness/claims.py)."""
    calls = _claimed_calls(adapter, spec)
    if not calls:
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no pure operation that has golden vectors")
    first = [adapter.call(op, value) for _, op, value in calls]
    previous = calls[-1][0]
    for index in reversed(range(len(calls))):
        what, op, value = calls[index]
        again = adapter.call(op, value)
        assert again == first[index], (
            f"{what} answered {_short(first[index])} in spec order, but {_short(again)} when asked again "
            f"after {previous}: a pure operation's answer must not depend on what was called before"
        )
        previous = what
