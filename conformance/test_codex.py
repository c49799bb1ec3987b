"""Tier 2, Codex failure facts: codex_outcome against the golden vectors of codex.yaml and
properties whose oracle is built from its tables (variants, http_status_forms, stop_reasons,
answer_selection, permission_facts, stderr signatures) and the allow-list grammar of
diagnostic.yaml, with canaries planted at every Codex site of redaction.yaml.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.codex.blame import CodexDiagnosis, comparable, with_counterfactual
from conformance.areas.codex.canaries import PLANTERS, canary_names, decoy_names, instantiate, planted_runs
from conformance.areas.codex.oracle import CodexOracle, Fact, js_uint16
from conformance.areas.codex.runs import answer_runs, fact_runs, mapped_terminals, settlement_runs, stderr_runs
from conformance.areas.codex.scenarios import (
    THREAD_ID,
    TURN_ID,
    agent_message,
    failed_turn,
    item_completed,
    notification,
    process_exit,
    response,
    scenario,
    server_request,
    terminal,
    turn_error,
)
from conformance.areas.codex.strategies import ErrorInfo, error_infos
from conformance.areas.diagnostic.grammar import roots
from conformance.areas.diagnostic.text_blame import as_vector
from conformance.areas.texts import any_text
from conformance.harness.adapter import Adapter
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"codex_outcome"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = load_spec()
ORACLE = CodexOracle(_SPEC)
RUN_RESULT = roots(_SPEC)[(ORACLE.product, "run-result")]


def _table(name: str) -> list[Json]:
    return list(_SPEC.table("codex", name).rows)


def _vectors(name: str, *extra: str) -> list[Any]:
    """One parameter per row of table ``name``, marked with its covers and as reaching the row."""
    return row_params(_SPEC, "codex", name, marks=lambda v: [requirement(*extra, *v["covers"]), *_fact_reach(v)])


def _fact_reach(vector: Json) -> list[pytest.MarkDecorator]:
    """A server-request vector that records a fact also reaches that permission_facts row."""
    if "request" not in vector or vector.get("fails_run", True):
        return []
    rows = _table("permission_facts")
    found = [i for i, r in enumerate(rows) if (r["request"], r["decision"]) == (vector["request"], vector["decision"])]
    return [pytest.mark.reaches("codex.permission_facts", *found)]


@pytest.fixture
def outcome(adapter: Adapter, claim: Claim) -> Callable[[Json], Json]:
    """codex_outcome of the adapter, once it claims the Codex provider."""
    claim("providers", "codex")
    return lambda request: adapter.call("codex_outcome", request)


DIAGNOSIS = CodexDiagnosis(_SPEC)


def _as_vector(request: Json, expected: Json, covers: list[str]) -> dict[str, str]:
    row = {"name": "found-by-property", "covers": covers, "scenario": request, "expected": expected}
    return as_vector("spec/codex.yaml outcome_vectors", row)


def _check(outcome: Callable[[Json], Json], request: Json, expected: Json, *, found: bool = False) -> None:
    """Raise a Violation of exactly the rules that tell the answer from the spec's result
    (codex_blame), and of RED-002 for a diagnostic outside the grammar."""
    answer = outcome(request)
    actual = comparable(answer)
    if actual != expected:
        blamed = with_counterfactual(outcome, request, expected, DIAGNOSIS.diagnose(request, expected, actual))
        raise Violation(
            blamed,
            operation="codex_outcome",
            input=request,
            expected=expected,
            actual=answer,
            sections=_as_vector(request, expected, blamed) if found else None,
        )
    _check_grammar(request, answer)


def _check_grammar(request: Json, answer: Json) -> None:
    """RED-002: a diagnostic is a sentence of the Codex run-result grammar."""
    if "diagnostic" in answer and not RUN_RESULT.matches(answer["diagnostic"]):
        raise Violation(
            ["RED-002"],
            operation="codex_outcome",
            input=request,
            expected="a diagnostic that is a sentence of the Codex run-result grammar",
            actual=answer,
        )


def _failed_run(*events: Json, variant: str = "other", mode: str = "never") -> Json:
    """A committed run that observes ``events`` and then fails with a string variant."""
    return scenario([response(), *events, terminal(failed_turn(turn_error(variant)))], mode=mode)


# ---- golden vectors


@pytest.mark.parametrize("vector", _vectors("outcome_vectors", "CDX-074"))
def test_outcome_vector(outcome: Callable[[Json], Json], vector: Json) -> None:
    _check(outcome, vector["scenario"], vector["expected"])


@pytest.mark.parametrize("form", _vectors("http_status_forms", "CDX-001", "DIA-008"))
def test_http_status_form(outcome: Callable[[Json], Json], form: Json) -> None:
    value = form.get("value")
    assert js_uint16(value) == form["printed"] and (form["printed"] is not None) == form["kept"], (
        "the suite's httpStatusCode reading disagrees with this row"
    )
    detail = {"httpStatusCode": value} if form["present"] else {}
    request = scenario([response(), terminal(failed_turn(turn_error({form["variant"]: detail})))])
    _check(outcome, request, ORACLE.failure("never", [], "turn", form["variant"], http_status=form["printed"]))


@pytest.mark.parametrize("rule", _vectors("unknown_rules", "CDX-009"))
def test_unknown_rule(outcome: Callable[[Json], Json], rule: Json) -> None:
    request = scenario([response(), terminal(rule["turn"])])
    _check(outcome, request, ORACLE.failure("never", [], "turn", rule["category"]))


@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "newer_variants", marks=lambda r: [requirement("CDX-008")]))
def test_newer_variant_is_unknown(outcome: Callable[[Json], Json], row: Json) -> None:
    request = scenario([response(), terminal(failed_turn(turn_error(row["wire"], misalignment=None)))])
    _check(outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


@pytest.mark.parametrize("vector", _vectors("answer_selection", "CDX-013"))
def test_answer_selection(outcome: Callable[[Json], Json], vector: Json) -> None:
    events = [response()]
    for item in vector["items"]:
        events.append(item_completed(item))
        if ORACLE.fatal_agent_message(item):
            break  # a fatal item settles the run; nothing follows it on stdout
    else:
        events.append(terminal(failed_turn(None, status="completed")))
    expected: Json = {"stopReason": vector["stop_reason"], "output": vector["output"], "replies": []}
    if vector["diagnostic"] is not None:
        expected["diagnostic"] = vector["diagnostic"]
    _check(outcome, scenario(events), expected)


@pytest.mark.parametrize("vector", _vectors("server_request_replies", "CDX-035", "CDX-036"))
def test_server_request_reply(outcome: Callable[[Json], Json], vector: Json) -> None:
    request_id = f"request-{vector['name']}"
    ask = server_request(request_id, vector["method"], vector["params"])
    replies = [{"id": request_id, **vector["reply"]}]
    if vector["fails_run"]:
        request = scenario([response(), ask])
        expected = ORACLE.failure("never", [], "turn", "unknown", replies=replies)
    else:
        request = _failed_run(ask)
        fact = ORACLE.fact_by_decision(vector["request"], vector["decision"])
        expected = ORACLE.failure("never", [], "turn", "other", fact=fact, replies=replies)
    _check(outcome, request, expected)


@pytest.mark.parametrize("vector", _vectors("stderr_vectors", "RED-006"))
def test_stderr_vector(outcome: Callable[[Json], Json], vector: Json) -> None:
    request = _failed_run(*({"stderr": c} for c in vector["chunks"]), mode=vector["mode"])
    expected = ORACLE.failure(vector["mode"], [], "turn", "other")
    if vector["fact"] is not None:
        expected["diagnostic"] += "\n" + vector["fact"]
    _check(outcome, request, expected)


# ---- the mapping, exhaustively and as a property


@requirement(
    "CDX-001", "CDX-002", "CDX-003", "CDX-004", "CDX-007", "CDX-011", "CDX-012", "CDX-013", "CDX-039", "DIA-008"
)
@pytest.mark.reaches("codex.variants", *range(len(_table("variants"))))
def test_every_variant_status_and_http_status_form(outcome: Callable[[Json], Json]) -> None:
    """Each of the sixteen variants under each terminal status, with every httpStatusCode form
    (it loops over every row of table variants, so it reaches each)."""
    forms = [(r["value"] if r["present"] else ..., r["printed"]) for r in _table("http_status_forms")]
    for row in _table("variants"):
        wires: list[tuple[Any, int | None]] = [(row["wire"], None)]
        if row["keeps_http_status"]:
            wires = [({row["variant"]: {} if v is ... else {"httpStatusCode": v}}, p) for v, p in forms]
        for wire, printed in wires:
            for status in ORACLE.statuses:
                request = scenario(
                    [response(), agent_message("partial", None), terminal(failed_turn(turn_error(wire), status=status))]
                )
                output = [{"type": "text", "text": "partial"}]
                if status == "completed":
                    expected: Json = {"stopReason": "completed", "output": output, "replies": []}
                elif status == "failed":
                    fact = ORACLE.fact_by_trigger("sandboxError") if row["variant"] == "sandboxError" else None
                    expected = ORACLE.failure("never", output, "turn", row["variant"], http_status=printed, fact=fact)
                    assert expected["stopReason"] == row["stop_reason"]
                else:
                    expected = ORACLE.failure("never", output, "turn", "unknown")
                _check(outcome, request, expected)


@pytest.mark.parametrize(
    "row",
    row_params(
        _SPEC,
        "codex",
        "variants",
        marks=lambda r: [requirement("CDX-006", "CDX-002")],
        where=lambda r: r["kind"] == "string",
    ),
)
def test_string_variant_written_as_an_object_is_unknown(outcome: Callable[[Json], Json], row: Json) -> None:
    """Each string variant written as a one-key object (with an empty, an object or a null detail)
    is outside the union: category unknown, stop reason error, never the variant."""
    for detail in ({}, {"httpStatusCode": 503}, None):
        request = scenario([response(), terminal(failed_turn(turn_error({row["variant"]: detail})))])
        _check(outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


def _terminal_case(row: Json) -> tuple[Json, Json]:
    """A run ending with the terminal of one terminal_handling row, and the spec's result."""
    answer = [agent_message("partial", "final_answer")] if row["name"] == "completed-with-answer" else []
    status = row["status"] if row["status"] in ORACLE.statuses else "inProgress"
    wire = {"failed-context-window": "contextWindowExceeded", "failed-sandbox-error": "sandboxError"}.get(
        row["name"], "other"
    )
    request = scenario([response(), *answer, terminal(failed_turn(turn_error(wire), status=status))])
    if row["stop_reason"] == "completed":
        return request, {"stopReason": "completed", "output": [{"type": "text", "text": "partial"}], "replies": []}
    category = wire if row["category"] == "mapped" or row["category"] == wire else row["category"]
    fact = ORACLE.fact_by_trigger("sandboxError") if row["permission_fact"] else None
    return request, ORACLE.failure("never", [], row["stage"], category, fact=fact)


@requirement("CDX-013", "CDX-011", "CDX-039")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "terminal_handling"))
def test_terminal_handling_row(outcome: Callable[[Json], Json], row: Json) -> None:
    """Each row of terminal_handling, deterministically: its status, its stop reason, its stage
    and category, and the sandbox fact where the row records one."""
    request, expected = _terminal_case(row)
    assert expected["stopReason"] == row["stop_reason"], "the suite's case disagrees with the row"
    _check(outcome, request, expected)


def _fact_trigger(row: Json) -> list[Json] | None:
    """The observation that fires a permission_facts row which is no server request (those are
    the rows of server_request_replies): a declined item, a sandboxError terminal, a signature."""
    trigger = str(row["trigger"])
    if trigger.startswith("item/completed"):
        kind = trigger.split("type ")[1].split(" ")[0]
        return [item_completed({"type": kind, "status": "declined"}), terminal(failed_turn(turn_error("other")))]
    if "sandboxError" in trigger:
        return [terminal(failed_turn(turn_error("sandboxError")))]
    if trigger.startswith("stderr"):
        return [{"stderr": trigger.split('"')[1]}, terminal(failed_turn(turn_error("other")))]
    return None


@requirement("CDX-036", "CDX-039", "CDX-040")
@pytest.mark.parametrize(
    "row", row_params(_SPEC, "codex", "permission_facts", where=lambda r: _fact_trigger(r) is not None)
)
def test_permission_fact_of_each_trigger(outcome: Callable[[Json], Json], row: Json) -> None:
    """Each permission_facts row fired by an item, a terminal or stderr records exactly its line."""
    events = _fact_trigger(row)
    assert events is not None
    category = "sandboxError" if "sandboxError" in str(row["trigger"]) else "other"
    fact = Fact(row["request"], row["decision"], row["reason"])
    _check(outcome, scenario([response(), *events]), ORACLE.failure("never", [], "turn", category, fact=fact))


# One run per row of table stop_reasons, in its order: (events after the turn/start response,
# cancelled, stage and category of the failure). The rows are prose; each case is checked
# against its row's stop reason and category before it is sent.
_ANSWER = agent_message("answer", "final_answer")
_STOP_CASES: list[tuple[list[Json], bool, str, str]] = [
    ([_ANSWER, terminal(failed_turn(None, status="completed"))], False, "", ""),
    ([terminal(failed_turn(turn_error("contextWindowExceeded")))], False, "turn", "contextWindowExceeded"),
    ([terminal(failed_turn(turn_error("cyberPolicy")))], False, "turn", "cyberPolicy"),
    ([terminal(failed_turn(turn_error("usageLimitExceeded")))], False, "turn", "usageLimitExceeded"),
    ([terminal(failed_turn(turn_error("futureVariant")))], False, "turn", "unknown"),
    ([terminal(failed_turn(turn_error("usageLimitExceeded"), status="interrupted"))], False, "turn", "unknown"),
    ([terminal(failed_turn(None, status="completed"))], False, "turn", "unknown"),
    ([process_exit(1, None)], False, "process", "process-exit"),
    ([_ANSWER, terminal(failed_turn(None, status="completed"))], True, "", ""),
]


@requirement("CDX-011", "CDX-012", "CDX-016", "CDX-022")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "stop_reasons"))
def test_stop_reason_of_each_situation(outcome: Callable[[Json], Json], row: Json) -> None:
    """Each row of stop_reasons, deterministically."""
    events, cancelled, stage, category = _STOP_CASES[_table("stop_reasons").index(row)]
    request = scenario([response(), *events], cancelled=cancelled)
    output = [{"type": "text", "text": "answer"}] if events[0] is _ANSWER else []
    if row["stop_reason"] in ("completed", "aborted"):
        expected: Json = {"stopReason": row["stop_reason"], "output": output, "replies": []}
    else:
        exit_code = 1 if stage == "process" else None
        expected = ORACLE.failure("never", output, stage, category, exit_code=exit_code)
    assert expected["stopReason"] == row["stop_reason"], "the suite's case disagrees with its row"
    assert row.get("category") in (None, category), "the suite's case disagrees with its row"
    _check(outcome, request, expected)


_T, _U = {"threadId": THREAD_ID}, {"threadId": THREAD_ID, "turnId": TURN_ID}
_OTHER = terminal(failed_turn(turn_error("other")))
# One observation per row of notification_handling that fails (or, for a last step, passes) the
# row's check, keyed by (method, step), and what the row says follows: "fatal", "ignored" (the
# run goes on to a failed `other` terminal), or a named effect.
_NOTIFICATION_CASES: dict[tuple[str, int], tuple[list[Json], str]] = {
    ("turn/started", 1): ([notification("turn/started", {"threadId": 42, "turn": {"id": TURN_ID}})], "fatal"),
    ("turn/started", 2): ([notification("turn/started", {"threadId": "thread-2", "turn": None})], "ignored"),
    ("turn/started", 3): ([notification("turn/started", {**_T, "turn": None})], "fatal"),
    ("turn/started", 4): ([notification("turn/started", {**_T, "turn": {"id": ""}})], "fatal-early"),
    ("turn/started", 5): ([notification("turn/started", {**_T, "turn": {"id": TURN_ID}})], "ignored"),
    ("item/completed", 1): ([notification("item/completed", {"threadId": 42, "turnId": TURN_ID, "item": {}})], "fatal"),
    ("item/completed", 2): ([item_completed(None, thread_id="thread-2")], "ignored"),
    ("item/completed", 3): ([item_completed({"type": "plan"}, turn_id="")], "fatal"),
    ("item/completed", 4): ([agent_message("early", "final_answer")], "queued"),
    ("item/completed", 5): ([agent_message("foreign", "final_answer", turn_id="turn-2")], "ignored"),
    ("item/completed", 6): ([item_completed(None)], "fatal"),
    ("item/completed", 7): ([item_completed({"type": "commandExecution", "status": "declined"})], "declined"),
    ("item/completed", 8): ([item_completed({"type": "reasoning", "text": "x"})], "ignored"),
    ("item/completed", 9): ([agent_message(5, "final_answer")], "fatal"),
    ("item/completed", 10): ([agent_message("x", "summary")], "fatal"),
    ("turn/completed", 1): ([notification("turn/completed", {"threadId": 42, "turn": {"id": TURN_ID}})], "fatal"),
    ("turn/completed", 2): ([terminal(failed_turn(None, status="completed"), thread_id="thread-2")], "ignored"),
    ("turn/completed", 3): ([notification("turn/completed", {**_T, "turn": [1]})], "fatal"),
    ("turn/completed", 4): ([terminal({"id": "", "status": "completed"})], "fatal"),
    ("turn/completed", 5): ([_OTHER], "queued"),
    ("turn/completed", 6): ([terminal(failed_turn(None, "turn-2", status="completed"))], "ignored"),
    ("turn/completed", 7): ([terminal(failed_turn(None, status="inProgress"))], "fatal"),
    ("turn/completed", 8): ([_OTHER], "settles"),
}


@requirement("CDX-024", "CDX-025", "CDX-026", "CDX-028")
@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "notification_handling"))
def test_notification_handling_row(outcome: Callable[[Json], Json], row: Json) -> None:
    """Each step of notification_handling, deterministically: a frame that fails its check (the
    last step: one that passes) and what the row says follows."""
    frames, effect = _NOTIFICATION_CASES[(row["method"], row["step"])]
    otherwise = str(row["otherwise"])
    assert effect.split("-")[0] != "fatal" or otherwise.startswith("fatal"), "the case disagrees with its row"
    assert effect != "ignored" or otherwise in ("the frame is ignored", "-"), "the case disagrees with its row"
    if effect == "fatal":
        request, expected = scenario([response(), *frames]), ORACLE.failure("never", [], "turn", "unknown")
    elif effect == "fatal-early":
        request, expected = scenario(frames), ORACLE.failure("never", [], "turn-start", "unknown")
    elif effect == "queued":  # before the turn/start response: queued, replayed at the commit
        request = scenario([*frames, response(), *([] if frames[0] is _OTHER else [_OTHER])])
        output = [] if frames[0] is _OTHER else [{"type": "text", "text": "early"}]
        expected = ORACLE.failure("never", output, "turn", "other")
    elif effect == "declined":
        request = scenario([response(), *frames, _OTHER])
        fact = ORACLE.fact_by_trigger("type commandExecution")
        expected = ORACLE.failure("never", [], "turn", "other", fact=fact)
    elif effect == "settles":
        request, expected = scenario([response(), *frames]), ORACLE.failure("never", [], "turn", "other")
    else:
        request, expected = scenario([response(), *frames, _OTHER]), ORACLE.failure("never", [], "turn", "other")
    _check(outcome, request, expected)


@requirement("CDX-003", "CDX-006", "RED-004")
def test_object_variant_needs_one_key_and_an_object_detail(outcome: Callable[[Json], Json]) -> None:
    """Every object variant of table variants beside a second key (known or not), with a detail
    that is not an object, or written with another case, is unknown."""
    names = sorted(ORACLE.variant_names) + ["futureVariant", ""]
    for row in _table("variants"):
        if row["kind"] != "object":
            continue
        [(name, detail)] = row["wire"].items()
        infos: list[Any] = [{name: detail, other: {}} for other in names if other != name]
        infos += [{other: {}, name: detail} for other in names if other != name]
        infos += [{name: bad} for bad in (None, [], [detail], "review", 503, True)]
        infos += [{name.upper(): detail}, {name[0].upper() + name[1:]: detail}]
        for info in infos:
            request = scenario([response(), terminal(failed_turn(turn_error(info)))])
            _check(outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


@requirement(
    "CDX-001",
    "CDX-002",
    "CDX-003",
    "CDX-004",
    "CDX-005",
    "CDX-006",
    "CDX-007",
    "CDX-008",
    "CDX-009",
    "CDX-011",
    "CDX-012",
    "CDX-013",
    "CDX-014",
    "CDX-015",
    "CDX-023",
    "CDX-039",
    "CDX-045",
    "DIA-001",
    "DIA-002",
    "DIA-003",
    "DIA-004",
    "DIA-005",
    "DIA-006",
    "DIA-007",
    "DIA-008",
    "DIA-012",
    "DIA-014",
    "RED-002",
    "RED-004",
)
def test_terminal_mapping_follows_the_tables(outcome: Callable[[Json], Json], spec: Spec) -> None:
    @given(case=mapped_terminals(spec, ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        _check(outcome, *case, found=True)

    check()


@requirement("CDX-011")
def test_no_category_is_a_refusal(outcome: Callable[[Json], Json], spec: Spec) -> None:
    """Whatever the error info, a failed terminal is error or max-tokens, never refusal or aborted."""

    @given(info=error_infos(spec))
    def check(info: ErrorInfo) -> None:
        request = scenario([response(), terminal(failed_turn(info.error))])
        result = outcome(request)
        if result["stopReason"] != ORACLE.stop_reason(info.category):
            raise Violation(
                ["CDX-011"],
                operation="codex_outcome",
                input=request,
                expected={"stopReason": ORACLE.stop_reason(info.category)},
                actual=result,
                detail=f"category {info.category} ({info.family}) settled as {result['stopReason']}",
            )

    check()


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
def test_answer_and_stop_reason_follow_the_tables(outcome: Callable[[Json], Json]) -> None:
    @given(case=answer_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        _check(outcome, *case, found=True)

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
def test_settlement_follows_observation_order(outcome: Callable[[Json], Json]) -> None:
    @given(case=settlement_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        _check(outcome, *case, found=True)

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
def test_only_the_latest_permission_fact_is_kept(outcome: Callable[[Json], Json], spec: Spec) -> None:
    @given(case=fact_runs(spec, ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        _check(outcome, *case, found=True)

    check()


@requirement("CDX-040", "RED-006")
def test_stderr_signature_split_at_every_position(outcome: Callable[[Json], Json]) -> None:
    for signature in ORACLE.signatures:
        expected = ORACLE.failure("never", [], "turn", "other", fact=ORACLE.signature_fact(signature))
        for cut in range(1, len(signature)):
            chunks = [f"SECRET_TOKEN {signature[:cut]}", f"{signature[cut:]} /private/secret.txt"]
            _check(outcome, _failed_run(*({"stderr": c} for c in chunks)), expected)
            three = [signature[:cut], signature[cut : cut + 1], signature[cut + 1 :]]
            _check(outcome, _failed_run(*({"stderr": c} for c in three if c)), expected)


@requirement("CDX-037", "CDX-040", "CDX-041", "RED-006")
def test_stderr_signatures_across_chunks(outcome: Callable[[Json], Json]) -> None:
    @given(case=stderr_runs(ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        _check(outcome, *case, found=True)

    check()


# ---- redaction


def _planted_via_outcome(row: Json) -> bool:
    return bool(row["product"] == ORACLE.product and "codex_outcome" in row["plant_via"])


CANARY_SITES = [row for row in _SPEC.table("redaction", "canary_sites").rows if _planted_via_outcome(row)]
SITE_REQUIREMENTS = {
    "turn-error-message": ["CDX-009"],
    "turn-error-additional-details": ["CDX-009"],
    "active-turn-kind": ["CDX-005"],
    "unknown-variant": ["CDX-006", "RED-004"],
    "approval-request-command": ["CDX-036"],
    "command-item-command": ["CDX-036"],
    "file-change-patch": ["CDX-036"],
    "server-request-payload": ["CDX-034", "CDX-036"],
    "error-notification": ["CDX-023"],
    "rpc-error-message": ["CDX-027", "CDX-051"],
    "protocol-id": ["CDX-058"],
    "stderr-chunk": ["CDX-041", "RED-006"],
}


def _without_ids(replies: list[Json]) -> list[Json]:
    return [{k: v for k, v in reply.items() if k != "id"} for reply in replies]


def _site_marks(row: Json) -> list[pytest.MarkDecorator]:
    return [
        requirement(
            "RED-001",
            "RED-002",
            "RED-003",
            "RED-005",
            "RED-007",
            "RED-008",
            "CDX-072",
            *SITE_REQUIREMENTS.get(row["site"], []),
        )
    ]


@pytest.mark.parametrize(
    "site",
    [
        pytest.param(
            param.values[0]["site"],
            id=param.values[0]["site"],
            marks=[*param.marks, *_site_marks(param.values[0])],
        )
        for param in row_params(_SPEC, "redaction", "canary_sites", where=_planted_via_outcome)
    ],
)
def test_canaries_never_reach_a_text(outcome: Callable[[Json], Json], spec: Spec, site: str) -> None:
    """A canary planted at the site appears in no diagnostic and no reply (in any case), every
    diagnostic is a sentence of the grammar, and decoys spelling categories, fields and whole
    lines in the same places give exactly the same texts."""
    assert site in PLANTERS, f"the suite has no way to plant a canary at Codex site {site!r}"
    hexes = st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)

    # One property per site; a quarter of the profile's examples each keeps the twelve of them
    # within the suite's time budget while every site is still planted on every run.
    @share(4, floor=10)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        template, count = data.draw(planted_runs(spec, site))
        canaries = canary_names(data.draw(st.lists(hexes, min_size=count, max_size=count, unique=True)))
        results, requests = [], []
        for names in (canaries, decoy_names(count)):
            request = instantiate(template, names)
            result = outcome(request)
            requests.append(request)
            results.append({**result, "replies": _without_ids(result["replies"])})
        texts = [results[0].get("diagnostic", ""), json.dumps(results[0]["replies"], ensure_ascii=False)]
        for canary in canaries:
            for text in texts:
                if canary.lower() in text.lower():
                    raise Violation(
                        ["RED-008", "RED-001", "CDX-072", *SITE_REQUIREMENTS.get(site, [])],
                        operation="codex_outcome",
                        input=requests[0],
                        expected=f"no text containing the canary {canary!r} planted at site {site}",
                        actual=outcome(requests[0]),
                        detail=f"canary {canary!r} planted at {site} appears in {text!r}",
                    )
        for request, result in zip(requests, results, strict=True):
            _check_grammar(request, result)
        if results[0] != results[1]:
            raise Violation(
                ["RED-005"],
                operation="codex_outcome",
                input={"with canaries": requests[0], "with decoys": requests[1]},
                expected=results[0],
                actual=results[1],
                detail=f"replacing the canaries at {site} by decoys changed the result",
            )

    check()


@requirement("RED-008")
def test_every_codex_canary_site_has_a_planter() -> None:
    """The canary_sites rows are the coverage list: every Codex row planted via codex_outcome is planted."""
    assert sorted(PLANTERS) == sorted(row["site"] for row in CANARY_SITES)


@requirement("CDX-033", "CDX-034", "CDX-035")
def test_replies_echo_ids_and_follow_the_thread(outcome: Callable[[Json], Json]) -> None:
    """Replies carry the request's id with its JSON type; a request of another thread fails the run."""

    @given(
        request_id=st.one_of(any_text(min_size=1, max_size=8), st.integers(-(2**31), 2**31)),
        thread=st.sampled_from([THREAD_ID, "thread-2"]),
        turn=st.sampled_from([TURN_ID, "turn-2"]),
    )
    def check(request_id: Any, thread: str, turn: str) -> None:
        ask = server_request(request_id, "item/tool/requestUserInput", {"threadId": thread, "turnId": turn})
        foreign = (thread, turn) != (THREAD_ID, TURN_ID)
        request = scenario([response(), ask]) if foreign else _failed_run(ask)
        result = outcome(request)
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
def test_exit_outcome_is_printed_only_when_observed(outcome: Callable[[Json], Json]) -> None:
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
            request = _failed_run(process_exit(exit_code, signal))
            request["events"].append(request["events"].pop(1))  # the exit comes after the terminal
            expected = ORACLE.failure("never", [], "turn", "other", exit_code=exit_code, signal=signal)
        _check(outcome, request, expected)

    check()
