"""Tier 2, Codex failure facts: codex_outcome against the golden vectors of codex.yaml and
the variant mapping of its tables (variants, http_status_forms, the error-info union),
exhaustively and as a property, with the allow-list grammar of diagnostic.yaml. The other
Codex tiers hold it to the rest: one case per row of the prose tables (test_codex_tables.py),
generated runs (test_codex_runs.py) and canaries at every Codex site of redaction.yaml
(test_codex_redaction.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.codex.checks import Outcome, codex_checks, failed_run
from conformance.areas.codex.oracle import js_uint16
from conformance.areas.codex.runs import mapped_terminals
from conformance.areas.codex.scenarios import (
    agent_message,
    failed_turn,
    item_completed,
    response,
    scenario,
    server_request,
    terminal,
    turn_error,
)
from conformance.areas.codex.strategies import ErrorInfo, error_infos, unread_details
from conformance.plugin import contract
from conformance.spec import Spec
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"codex_outcome"})

Json = dict[str, Any]
requirement = pytest.mark.requirement

_SPEC = contract()  # the spec at the claimed product versions
CHECKS = codex_checks(_SPEC)
ORACLE = CHECKS.oracle


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


# ---- golden vectors


@pytest.mark.parametrize("vector", _vectors("outcome_vectors", "CDX-074"))
def test_outcome_vector(codex_outcome: Outcome, vector: Json) -> None:
    CHECKS.check(codex_outcome, vector["scenario"], vector["expected"])


@pytest.mark.parametrize("form", _vectors("http_status_forms", "CDX-001", "DIA-008"))
def test_http_status_form(codex_outcome: Outcome, form: Json) -> None:
    value = form.get("value")
    assert js_uint16(value) == form["printed"] and (form["printed"] is not None) == form["kept"], (
        "the suite's httpStatusCode reading disagrees with this row"
    )
    detail = {"httpStatusCode": value} if form["present"] else {}
    request = scenario([response(), terminal(failed_turn(turn_error({form["variant"]: detail})))])
    CHECKS.check(
        codex_outcome, request, ORACLE.failure("never", [], "turn", form["variant"], http_status=form["printed"])
    )


@pytest.mark.parametrize("rule", _vectors("unknown_rules", "CDX-009"))
def test_unknown_rule(codex_outcome: Outcome, rule: Json) -> None:
    request = scenario([response(), terminal(rule["turn"])])
    CHECKS.check(codex_outcome, request, ORACLE.failure("never", [], "turn", rule["category"]))


@pytest.mark.parametrize("row", row_params(_SPEC, "codex", "newer_variants", marks=lambda r: [requirement("CDX-008")]))
def test_newer_variant_is_unknown(codex_outcome: Outcome, row: Json) -> None:
    request = scenario([response(), terminal(failed_turn(turn_error(row["wire"], misalignment=None)))])
    CHECKS.check(codex_outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


@pytest.mark.parametrize("vector", _vectors("answer_selection", "CDX-013"))
def test_answer_selection(codex_outcome: Outcome, vector: Json) -> None:
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
    CHECKS.check(codex_outcome, scenario(events), expected)


@pytest.mark.parametrize("vector", _vectors("server_request_replies", "CDX-035", "CDX-036"))
def test_server_request_reply(codex_outcome: Outcome, vector: Json) -> None:
    request_id = f"request-{vector['name']}"
    ask = server_request(request_id, vector["method"], vector["params"])
    replies = [{"id": request_id, **vector["reply"]}]
    if vector["fails_run"]:
        request = scenario([response(), ask])
        expected = ORACLE.failure("never", [], "turn", "unknown", replies=replies)
    else:
        request = failed_run(ask)
        fact = ORACLE.fact_by_decision(vector["request"], vector["decision"])
        expected = ORACLE.failure("never", [], "turn", "other", fact=fact, replies=replies)
    CHECKS.check(codex_outcome, request, expected)


@pytest.mark.parametrize("vector", _vectors("stderr_vectors", "RED-006"))
def test_stderr_vector(codex_outcome: Outcome, vector: Json) -> None:
    request = failed_run(*({"stderr": c} for c in vector["chunks"]), mode=vector["mode"])
    expected = ORACLE.failure(vector["mode"], [], "turn", "other")
    if vector["fact"] is not None:
        expected["diagnostic"] += "\n" + vector["fact"]
    CHECKS.check(codex_outcome, request, expected)


def _signature_cuts() -> list[Any]:
    """Each stderr signature cut in two at every position, and in three around its middle, with
    noise before and after: a scanner that reads each chunk alone misses every one (CDX-040)."""
    params = []
    for signature in ORACLE.signatures:
        middle = len(signature) // 2
        cuts = [(i,) for i in range(1, len(signature))] + [(i, middle + 1) for i in range(1, middle)]
        for cut in cuts:
            bounds = [0, *cut, len(signature)]
            pieces = [signature[a:b] for a, b in itertools.pairwise(bounds)]
            chunks = ["noise " + pieces[0], *pieces[1:-1], pieces[-1] + " noise"]
            params.append(pytest.param(signature, chunks, id=f"{signature[:8]}-{'-'.join(map(str, cut))}"))
    return params


@requirement("CDX-040")
@pytest.mark.parametrize(("signature", "chunks"), _signature_cuts())
def test_signature_split_at_every_cut(codex_outcome: Outcome, signature: str, chunks: list[str]) -> None:
    request = failed_run(*({"stderr": c} for c in chunks))
    expected = ORACLE.failure("never", [], "turn", "other", fact=ORACLE.signature_fact(signature))
    CHECKS.check(codex_outcome, request, expected)


# ---- the mapping, exhaustively and as a property


@requirement(
    "CDX-001",
    "CDX-002",
    "CDX-003",
    "CDX-004",
    "CDX-007",
    "CDX-011",
    "CDX-012",
    "CDX-013",
    "CDX-039",
    "CDX-077",
    "DIA-008",
)
@pytest.mark.reaches("codex.variants", *range(len(_table("variants"))))
def test_every_variant_status_and_http_status_form(codex_outcome: Outcome) -> None:
    """Each variant of the claimed version's union under each terminal status, with every httpStatusCode form
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
                try:
                    CHECKS.check(codex_outcome, request, expected)
                except Violation as failed:
                    hint = CHECKS.version_hint(codex_outcome)  # advice beside the verdict, which stays
                    if not hint:
                        raise
                    raise Violation(
                        failed.requirements,
                        operation=failed.operation,
                        input=failed.input,
                        expected=failed.expected,
                        actual=failed.actual,
                        detail=f"{failed.detail}; {hint}",
                        sections=failed.sections,
                    ) from None


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
def test_string_variant_written_as_an_object_is_unknown(codex_outcome: Outcome, row: Json) -> None:
    """Each string variant written as a one-key object (with an empty, an object or a null detail)
    is outside the union: category unknown, stop reason error, never the variant."""
    for detail in ({}, {"httpStatusCode": 503}, None):
        request = scenario([response(), terminal(failed_turn(turn_error({row["variant"]: detail})))])
        CHECKS.check(codex_outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


@requirement("CDX-003", "CDX-006", "RED-004")
def test_object_variant_needs_one_key_and_an_object_detail(codex_outcome: Outcome) -> None:
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
            CHECKS.check(codex_outcome, request, ORACLE.failure("never", [], "turn", "unknown"))


_OBJECT_VARIANTS = row_params(
    _SPEC, "codex", "variants", marks=lambda r: [requirement("CDX-005")], where=lambda r: r["kind"] == "object"
)


@pytest.mark.parametrize("row", _OBJECT_VARIANTS)
def test_unread_detail_keys_change_nothing(codex_outcome: Outcome, spec: Spec, row: Json) -> None:
    """Stratified by object variant: its detail with keys the mapping never reads (any name, any
    JSON value, turnKind included) is the same variant, with the HTTP status of its httpStatusCode
    form where it keeps one; a wrong answer that the keys alone cause is CDX-005's."""
    variant = row["variant"]

    @share(len(_OBJECT_VARIANTS))
    @given(case=unread_details(spec, variant), status=st.sampled_from(ORACLE.statuses))
    def check(case: tuple[Json, int | None], status: str) -> None:
        detail, printed = case
        turn = failed_turn(turn_error({variant: detail}), status=status)
        request = scenario([response(), agent_message("partial", None), terminal(turn)])
        output = [{"type": "text", "text": "partial"}]
        if status == "completed":
            expected: Json = {"stopReason": "completed", "output": output, "replies": []}
        elif status == "failed":
            expected = ORACLE.failure("never", output, "turn", variant, http_status=printed)
        else:
            expected = ORACLE.failure("never", output, "turn", "unknown")
        CHECKS.check(codex_outcome, request, expected, found=True)

    check()


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
    "CDX-077",
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
def test_terminal_mapping_follows_the_tables(codex_outcome: Outcome, spec: Spec) -> None:
    @given(case=mapped_terminals(spec, ORACLE))
    def check(case: tuple[Json, Json]) -> None:
        CHECKS.check(codex_outcome, *case, found=True)

    check()


@requirement("CDX-011")
def test_no_category_is_a_refusal(codex_outcome: Outcome, spec: Spec) -> None:
    """Whatever the error info, a failed terminal is error or max-tokens, never refusal or aborted."""

    @given(info=error_infos(spec))
    def check(info: ErrorInfo) -> None:
        request = scenario([response(), terminal(failed_turn(info.error))])
        result = codex_outcome(request)
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
