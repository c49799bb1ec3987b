"""Tier 2, Claude Code: claude_code_outcome against the golden vectors, the classification,
stop-reason and permission-fact tables and the JavaScript whitespace set. The redaction
allow-list is the claude_code_redaction tier's (conformance/test_claude_code_redaction.py).

Every expected value comes from the spec: a vector's ``expected``, or the oracle of
conformance.areas.claude_code.oracle built from the claude-code.yaml tables and the diagnostic grammar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.claude_code.checks import check_answer, diagnosis, judge, outcome
from conformance.areas.claude_code.oracle import NATIVE_DENIAL, decide, expected_outcome, tables
from conformance.areas.claude_code.strategies import (
    error_results,
    events,
    native_denials,
    other_messages,
    outcomes,
    permission_events,
    result_messages,
    scenarios,
    situations,
    strict_successes,
    whitespace_text,
)
from conformance.areas.diagnostic.text_blame import misstaged
from conformance.harness.adapter import Adapter
from conformance.plugin import contract
from conformance.spec import Spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"claude_code_outcome"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = contract()  # the spec at the claimed product versions


def _claude(claim: Claim) -> None:
    claim("providers", "claude-code")


def _msg(message: Json) -> Json:
    return {"message": message}


messages = st.builds(_msg, st.one_of(other_messages(), native_denials()))


# --------------------------------------------------------------------------- golden vectors


def _decided_rows(vector: Json) -> list[pytest.MarkDecorator]:
    """The rows of result_classification, permission_facts and stop_reasons the vector's scenario
    is decided by (the oracle's decision), so that each row is reached by some vector."""
    decision = decide(_SPEC, vector["scenario"])
    t = tables(_SPEC)
    marks = [
        pytest.mark.reaches("claude-code.result_classification", list(t.classification).index(decision.row["name"])),
        pytest.mark.reaches("claude-code.stop_reasons", list(t.stop_reasons).index(decision.row["stop_reason"])),
    ]
    if decision.fact is not None:
        marks.append(pytest.mark.reaches("claude-code.permission_facts", list(t.facts).index(decision.fact["trigger"])))
    return marks


@pytest.mark.parametrize(
    "vector",
    row_params(
        _SPEC,
        "claude-code",
        "outcome_vectors",
        marks=lambda v: [requirement("CC-007", *v["covers"]), *_decided_rows(v)],
    ),
)
def test_outcome_vector(adapter: Adapter, claim: Claim, vector: Json) -> None:
    _claude(claim)
    actual = adapter.call("claude_code_outcome", vector["scenario"])
    judge(_SPEC, vector["scenario"], vector["expected"], actual, found=False, outcome=outcome(adapter))


# --------------------------------------------------------------------------- properties


@requirement("CC-002", "CC-003", "CC-007", "CC-023", "CC-035", "DIA-001", "DIA-002", "DIA-003", "DIA-009")
def test_any_run_follows_the_classification_table(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Any observed run settles as the first applicable result_classification row says, with a
    stop reason of table stop_reasons and a stage and category table stages allows in a result:
    the run is published, so even a CLI that died before any message never fails it at the
    start-up stage (CC-035)."""
    _claude(claim)

    @given(scenario=scenarios(spec))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)  # the oracle's result has the table's stop reason, stage and category

    check()


_VECTOR_RUNS = [v["scenario"] for v in _SPEC.table("claude-code", "outcome_vectors").rows]


def _staged_runs(stage: str) -> list[Json]:
    """The vectors' runs that fail at ``stage`` (the stage of the classification row deciding them)."""
    return [run for run in _VECTOR_RUNS if decide(_SPEC, run).row.get("stage") == stage]


@requirement("CC-002", "CC-035")
@pytest.mark.parametrize(
    "row", row_params(_SPEC, "claude-code", "stages", where=lambda r: "run-result" in r["surfaces_in"])
)
def test_failure_line_names_the_stage(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """Every vector's run failing at each stage a run result can show (the others: the
    claude_code_process tier): its failure line names that stage, with a category of its row;
    a stage only start() reports is CC-035's (the run was published). Only that is judged here;
    a result without a failure line, or the line's other fields, are the other tests' to blame."""
    _claude(claim)
    runs = _staged_runs(row["stage"])
    assert runs, f"no vector fails at stage {row['stage']}"
    for scenario in runs:
        actual = adapter.call("claude_code_outcome", scenario)
        if (found := misstaged(str(actual.get("diagnostic", "")), row["stage"], row["categories"])) is not None:
            stage, category = found
            raise Violation(
                ["CC-035"] if stage in diagnosis(spec).startup_stages else ["CC-002"],
                operation="claude_code_outcome",
                input=scenario,
                expected=f"a failure line of stage {row['stage']}, category one of {', '.join(row['categories'])}",
                actual=actual,
                detail=f"the failure line names stage {stage!r} and category {category!r}",
            )


_STOPS = row_params(_SPEC, "claude-code", "stop_reasons")


def _vector_runs(stop_reason: str) -> list[Json]:
    """The vectors' runs that end in the situation of ``stop_reason``; for aborted, every vector's
    run cancelled as well (local cancellation wins whether the stream succeeded or failed)."""
    runs = [{**run, "cancelled": True} for run in _VECTOR_RUNS] if stop_reason == "aborted" else _VECTOR_RUNS
    return [run for run in runs if decide(_SPEC, run).row["stop_reason"] == stop_reason]


@requirement("CC-003")
@pytest.mark.parametrize("row", _STOPS)
def test_each_situation_settles_with_its_stop_reason(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """One stratum per row of table stop_reasons: the vectors' runs that end in its situation, then
    drawn ones; each settles with the row's stop reason, output and diagnostic (never max-tokens
    or refusal), and a difference is blamed on the rule that decides it."""
    _claude(claim)
    stop = row["stop_reason"]

    def settle(scenario: Json) -> None:
        assert decide(spec, scenario).row["stop_reason"] == stop, "the stratum's run ends in its situation"
        actual = adapter.call("claude_code_outcome", scenario)
        expected = expected_outcome(spec, scenario)
        seen = {"stopReason": actual.get("stopReason"), "output": actual.get("output"), "d": "diagnostic" in actual}
        if seen != {"stopReason": stop, "output": expected["output"], "d": row["diagnostic"]}:
            judge(spec, scenario, expected, actual, outcome=outcome(adapter))

    for scenario in _vector_runs(stop):
        settle(scenario)

    @share(len(_STOPS))
    @given(scenario=situations(spec)[stop])
    def check(scenario: Json) -> None:
        settle(scenario)

    check()


@requirement("CC-005", "CC-008", "CC-009", "CC-010", "CC-012", "CC-022", "RED-004")
def test_every_result_subtype_is_classified_exactly(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """One result message of any subtype (the five, near misses, absent, not a string) with any
    is_error, errors and result, among ignored messages: only the five read fields count."""
    _claude(claim)
    run = st.builds(
        lambda before, result, after: [*before, _msg(result), *after],
        st.lists(messages, max_size=2),
        st.one_of(result_messages(spec), error_results(spec), strict_successes(spec)),
        st.lists(messages, max_size=1),
    )

    @given(scenario=scenarios(spec, event_lists=run, cancelled=st.just(False)))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)

    check()


@requirement("CC-011", "CC-012")
def test_blank_means_the_javascript_trim_set(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """A success result made of JS whitespace is invalid-success; one made of the code points only
    Python's str.strip() removes is content, and U+FEFF is whitespace (table strip_disagreements)."""
    _claude(claim)
    t = tables(spec)
    texts = st.one_of(
        whitespace_text(spec),
        st.text(alphabet=st.sampled_from(t.strip_only), min_size=1, max_size=4),
        st.text(alphabet=st.sampled_from(t.js_only), min_size=1, max_size=4),
        st.builds(
            lambda a, b, c: a + b + c, whitespace_text(spec), st.sampled_from(t.strip_only), whitespace_text(spec)
        ),
    )
    falsy = st.sampled_from([{"is_error": False}, {}, {"is_error": 0}, {"is_error": None}, {"is_error": ""}])

    @given(text=texts, is_error=falsy, mode=st.sampled_from(t.modes), outcome=st.one_of(st.none(), outcomes(spec)))
    def check(text: str, is_error: Json, mode: str, outcome: Json | None) -> None:
        message = {"type": "result", "subtype": "success", **is_error, "result": text}
        scenario: Json = {"mode": mode, "events": [_msg(message)], "outcome": outcome}
        check_answer(adapter, spec, scenario)

    check()


@requirement("CC-011", "CC-012")
@pytest.mark.parametrize("row", row_params(_SPEC, "claude-code", "strip_disagreements"))
def test_each_strip_disagreement(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """Each code point where Python's str.strip() and JavaScript's trim() disagree, alone and
    between spaces, as a success result: blank exactly when JavaScript trims it."""
    _claude(claim)
    char = chr(row["codepoint"])
    for text in (char, f" {char} ", char * 3):
        message = {"type": "result", "subtype": "success", "is_error": False, "result": text}
        check_answer(adapter, spec, {"mode": "dontAsk", "events": [_msg(message)]})


@requirement("CC-006", "CC-025", "CC-026", "CC-027", "CC-028", "DIA-011", "DIA-012", "DIA-013", "DIA-014")
def test_only_the_latest_permission_fact_follows_the_failure_line(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Any sequence of callbacks and native denials, in any mode, then a success, a failure, an
    exception or a cancellation: only the latest fact appears, after the failure line, and never on
    success or cancellation; facts observed after a failing result change nothing."""
    _claude(claim)
    before = st.lists(st.one_of(permission_events(spec), messages), min_size=1, max_size=6)
    terminal: st.SearchStrategy[list[Json]] = st.one_of(
        st.builds(lambda m: [_msg(m)], strict_successes(spec)),
        st.builds(lambda m: [_msg(m)], error_results(spec)),
        st.builds(lambda m: [_msg(m)], result_messages(spec)),
        st.just([]),
    )
    after = st.lists(permission_events(spec), max_size=2)
    run = st.builds(lambda b, t, a: [*b, *t, *a], before, terminal, after)

    @given(scenario=scenarios(spec, event_lists=run))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)

    check()


def _trigger_events(spec: Spec, row: Json) -> st.SearchStrategy[Json]:
    """The event that fires a permission_facts row's trigger: its callback, or (answer null) the
    SDK message it is, with any of that message's fields."""
    if row["answer"] is not None:
        return st.just({"callback": row["trigger"]})
    assert row["trigger"] == NATIVE_DENIAL, f"no event fires trigger {row['trigger']!r}"
    return native_denials().map(_msg)


_FACTS = row_params(_SPEC, "claude-code", "permission_facts")


@requirement("CC-025", "CC-026")
@pytest.mark.parametrize("row", _FACTS)
def test_bypass_mode_records_no_tool_permission_callback(adapter: Adapter, claim: Claim, spec: Spec, row: Json) -> None:
    """In bypassPermissions no tool-permission callback is installed, so canUseTool never becomes
    the fact; elicitation, dialog and native denials still do. One stratum per trigger of table
    permission_facts: that trigger is the last one before the failure, after any others."""
    _claude(claim)
    t = tables(spec)
    [mode] = [m for m in t.modes if m not in t.facts["canUseTool"]["modes"]]
    failure = st.one_of(error_results(spec).map(_msg), st.just(_msg({"type": "result", "subtype": "success"})))
    before = st.lists(permission_events(spec), max_size=3)
    run = st.builds(lambda b, trigger, f: [*b, trigger, f], before, _trigger_events(spec, row), failure)

    @share(len(_FACTS))
    @given(events=run, exception=st.booleans())
    def check(events: list[Json], exception: bool) -> None:
        scenario: Json = {"mode": mode, "events": events}
        if exception:
            scenario["events"] = events[:-1]
            scenario["exception"] = {"message": "boom"}
        fact = decide(spec, scenario).fact
        assert (fact is not None and fact["trigger"] == row["trigger"]) == (mode in row["modes"]), "the stratum's run"
        check_answer(adapter, spec, scenario)

    check()


@requirement(
    "CC-016",
    "CC-017",
    "CC-019",
    "CC-020",
    "CC-021",
    "DIA-004",
    "DIA-005",
    "DIA-006",
    "DIA-007",
    "DIA-010",
    "RED-007",
)
def test_exit_code_and_signal_are_independent(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Both, either or neither of exit code and signal (exit code 0 included), after every kind
    of failure: each printed exactly when observed, never read from the exception's text."""
    _claude(claim)
    failures: st.SearchStrategy[list[Json]] = st.one_of(
        st.builds(lambda m: [_msg(m)], error_results(spec)),
        st.builds(lambda m: [_msg(m)], result_messages(spec)),
        st.builds(lambda m: [_msg(m)], strict_successes(spec)),
        st.just([]),
    )
    run = st.builds(lambda b, f: [*b, *f], st.lists(st.one_of(messages, permission_events(spec)), max_size=2), failures)

    @given(
        scenario=scenarios(spec, event_lists=run, cancelled=st.just(False)),
        outcome=st.one_of(outcomes(spec), st.sampled_from([{"exitCode": 0, "signal": None}, None])),
    )
    def check(scenario: Json, outcome: Json | None) -> None:
        scenario["outcome"] = outcome
        check_answer(adapter, spec, scenario)

    check()


@requirement("CC-004", "DIA-008")
def test_claude_code_lines_never_carry_an_http_status(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Result messages with api_error_status (a real HTTP 500/429 arrives as a success marked
    is_error) and assistant messages with an error: the line never has an HTTP status field."""
    _claude(claim)
    with_status = st.builds(
        lambda message, status: {**message, "api_error_status": status},
        st.one_of(result_messages(spec), error_results(spec), strict_successes(spec)),
        st.one_of(st.integers(0, 65535), st.sampled_from([429, 500, 503]), st.none()),
    )
    api_error = st.builds(
        lambda status: {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "result": "API Error",
            "api_error_status": status,
            "terminal_reason": "api_error",
        },
        st.sampled_from([429, 500, 503, 0]),
    )
    run = st.builds(lambda b, r: [*b, _msg(r)], st.lists(messages, max_size=2), st.one_of(with_status, api_error))

    @given(scenario=scenarios(spec, event_lists=run, cancelled=st.just(False)))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)

    check()


@requirement("CC-013", "CC-014", "CC-015", "CC-018", "CC-028")
def test_the_stream_is_consumed_in_order(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Several result messages with other events between them: the latest strict success wins
    only at a normal end, the first failing result decides at once, an exception after a result
    fails closed."""
    _claude(claim)
    result = st.one_of(strict_successes(spec), error_results(spec), result_messages(spec)).map(_msg)
    run = st.lists(st.one_of(result, result, messages, permission_events(spec)), max_size=7)

    @given(scenario=scenarios(spec, event_lists=run, cancelled=st.just(False)))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)

    check()


@requirement("CC-024", "DIA-014")
def test_local_cancellation_wins_as_aborted(adapter: Adapter, claim: Claim, spec: Spec) -> None:
    """Cancelled locally, whatever the stream did: aborted, no output, no diagnostic."""
    _claude(claim)

    @given(scenario=scenarios(spec, event_lists=events(spec), cancelled=st.just(True)))
    def check(scenario: Json) -> None:
        check_answer(adapter, spec, scenario)

    check()
