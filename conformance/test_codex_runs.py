"""Tier 2, codex_runs: codex_outcome over generated runs: answer selection and settlement in
observation order, the latest permission fact, stderr signatures split across chunks, replies
to server requests and the observed exit, each held to the oracle built from codex.yaml's
tables (conformance.areas.codex.oracle) and to the diagnostic grammar.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.codex.checks import Outcome, codex_checks, failed_run
from conformance.areas.codex.runs import answer_runs, fact_runs, settlement_runs, stderr_runs
from conformance.areas.codex.scenarios import (
    THREAD_ID,
    TURN_ID,
    failed_turn,
    process_exit,
    response,
    scenario,
    server_request,
    terminal,
    turn_error,
)
from conformance.areas.codex.triggers import Trigger, fact_trigger
from conformance.areas.texts import any_text
from conformance.plugin import contract
from conformance.spec import Spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"codex_outcome"})

Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = contract()  # the spec at the claimed product versions
CHECKS = codex_checks(_SPEC)
ORACLE = CHECKS.oracle


# ---- answer selection and settlement


@requirement(
    "CDX-014",
    "CDX-015",
    "CDX-016",
    "CDX-018",
    "CDX-019",
    "CDX-020",
    "CDX-021",
    "CDX-022",
    "CDX-024",
    "CDX-028",
    "CDX-044",
    "CDX-046",
    "CDX-047",
    "DIA-014",
)
def test_answer_and_stop_reason_follow_the_tables(codex_outcome: Outcome) -> None:
    @given(case=answer_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        CHECKS.check(codex_outcome, *case, found=True)

    check()


@requirement(
    "CDX-010",
    "CDX-016",
    "CDX-027",
    "CDX-043",
    "CDX-044",
    "CDX-045",
    "CDX-046",
    "CDX-047",
    "CDX-048",
    "CDX-074",
    "DIA-004",
    "DIA-009",
    "DIA-005",
    "DIA-006",
    "DIA-007",
    "DIA-010",
    "DIA-014",
)
def test_settlement_follows_observation_order(codex_outcome: Outcome) -> None:
    @given(case=settlement_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        CHECKS.check(codex_outcome, *case, found=True)

    check()


# ---- permission facts and stderr


@requirement(
    "CDX-031",
    "CDX-035",
    "CDX-036",
    "CDX-037",
    "CDX-038",
    "CDX-039",
    "CDX-043",
    "CDX-015",
    "CDX-016",
    "DIA-011",
    "DIA-012",
    "DIA-013",
    "DIA-014",
)
def test_only_the_latest_permission_fact_is_kept(codex_outcome: Outcome, spec: Spec) -> None:
    @given(case=fact_runs(spec, ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        CHECKS.check(codex_outcome, *case, found=True)

    check()


def _partner(row: Json, *, stderr: bool = False) -> Trigger:
    """Another fact for ``row``'s order cases: the next row of permission_facts (in a cycle) that
    records another line and is no terminal; with ``stderr``, the next stderr signature's."""
    rows = list(_SPEC.table("codex", "permission_facts").rows)
    own = fact_trigger(_SPEC, row)
    for other in rows[rows.index(row) + 1 :] + rows[: rows.index(row)]:
        partner = fact_trigger(_SPEC, other, 1)
        if not partner.terminal and partner.fact != own.fact and (not stderr or "stderr" in partner.event):
            return partner
    raise AssertionError(f"permission_facts has no partner for {row['trigger']!r}")


def _order_cases(row: Json) -> list[tuple[Json, Json]]:
    """The row's fact observed just before and just after another one, after the turn/start
    response and before it, with the result: each time the one observed last is kept. Before
    the response the other is a stderr chunk, ordered at receipt, so that a frame queued until
    the commit and ordered at its replay is told apart (CDX-037: an early frame keeps its
    receipt's order); after a terminal, stderr is all that is still observed (CDX-074)."""
    own, late, early = fact_trigger(_SPEC, row), _partner(row), _partner(row, stderr=True)
    end = [] if own.terminal else [terminal(failed_turn(turn_error("other")))]
    orders: list[tuple[list[Trigger | None], Trigger]] = [  # None: the turn/start response
        ([None, own, early if own.terminal else late], early if own.terminal else late),
        ([None, late, own], own),
        ([own, early, None], early),
        ([early, own, None], own),
    ]
    cases = []
    for sequence, kept in orders:
        events = [response() if t is None else t.event for t in sequence] + end
        replies = [r for t in sequence if t is not None for r in t.replies]
        category = "sandboxError" if own.terminal else "other"
        cases.append((scenario(events), ORACLE.failure("never", [], "turn", category, fact=kept.fact, replies=replies)))
    return cases


@requirement("CDX-037")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "permission_facts"))
def test_the_fact_observed_last_is_kept(codex_outcome: Outcome, row: Json) -> None:
    """Each permission_facts row's fact, observed before and after another fact, early and late:
    only the fact observed last by the per-run order is kept, whichever fired first."""
    for request, expected in _order_cases(row):
        CHECKS.check(codex_outcome, request, expected)


@requirement("CDX-040", "RED-006")
def test_stderr_signature_split_at_every_position(codex_outcome: Outcome) -> None:
    for signature in ORACLE.signatures:
        expected = ORACLE.failure("never", [], "turn", "other", fact=ORACLE.signature_fact(signature))
        for cut in range(1, len(signature)):
            chunks = [f"SECRET_TOKEN {signature[:cut]}", f"{signature[cut:]} /private/secret.txt"]
            CHECKS.check(codex_outcome, failed_run(*({"stderr": c} for c in chunks)), expected)
            three = [signature[:cut], signature[cut : cut + 1], signature[cut + 1 :]]
            CHECKS.check(codex_outcome, failed_run(*({"stderr": c} for c in three if c)), expected)


@requirement("CDX-037", "CDX-040", "CDX-041", "RED-006")
def test_stderr_signatures_across_chunks(codex_outcome: Outcome) -> None:
    @given(case=stderr_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        CHECKS.check(codex_outcome, *case, found=True)

    check()


# ---- server requests and the process exit


@requirement("CDX-033", "CDX-034", "CDX-035")
def test_replies_echo_ids_and_follow_the_thread(codex_outcome: Outcome) -> None:
    """Replies carry the request's id with its JSON type; a request of another thread fails the run."""

    @given(
        request_id=st.one_of(any_text(min_size=1, max_size=8), st.integers(-(2**31), 2**31)),
        thread=st.sampled_from([THREAD_ID, "thread-2"]),
        turn=st.sampled_from([TURN_ID, "turn-2"]),
    )
    def check(request_id: Any, thread: str, turn: str) -> None:
        ask = server_request(request_id, "item/tool/requestUserInput", {"threadId": thread, "turnId": turn})
        foreign = (thread, turn) != (THREAD_ID, TURN_ID)
        request = scenario([response(), ask]) if foreign else failed_run(ask)
        result = codex_outcome(request)
        ids = [r["id"] for r in result["replies"]]
        if ids != [request_id] or type(ids[0]) is not type(request_id):
            raise Violation(
                ["CDX-035"],
                operation="codex_outcome",
                input=request,
                expected={"reply ids": [request_id]},
                actual=result,
                detail=f"reply ids {ids!r} for the request id {request_id!r}",
            )
        if ("error" in result["replies"][0]) != foreign:
            raise Violation(
                ["CDX-033"],
                operation="codex_outcome",
                input=request,
                expected="a JSON-RPC error reply" if foreign else "a result reply",
                actual=result,
                detail=f"a request of thread {thread!r} and turn {turn!r}",
            )

    check()


@requirement("CDX-044", "CDX-045")
def test_exit_outcome_is_printed_only_when_observed(codex_outcome: Outcome) -> None:
    @given(
        exit_code=st.none() | st.integers(0, 4294967295),
        signal=st.none() | st.sampled_from(ORACLE.signals),
        before_terminal=st.booleans(),
    )
    def check(exit_code: int | None, signal: str | None, before_terminal: bool) -> None:
        if before_terminal:
            request = scenario([response(), process_exit(exit_code, signal)])
            expected = ORACLE.failure("never", [], "process", "process-exit", exit_code=exit_code, signal=signal)
        else:
            request = failed_run(process_exit(exit_code, signal))
            request["events"].append(request["events"].pop(1))  # the exit comes after the terminal
            expected = ORACLE.failure("never", [], "turn", "other", exit_code=exit_code, signal=signal)
        CHECKS.check(codex_outcome, request, expected)

    check()
