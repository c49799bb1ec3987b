"""Tier 2, diagnostic: format_diagnostic and bound_diagnostic against the golden vectors, and
format_diagnostic against the grammar, the failure-line field table and committed snapshots of
every stage and category each product's stages table allows. The bound's properties are the
diagnostic_bound tier's (conformance/test_diagnostic_bound.py).

Expected values come from the spec: a vector's ``expected``, the grammar of diagnostic.yaml,
the oracles of conformance/areas/diagnostic/oracle.py (built from its tables), and the snapshots in
conformance/__snapshots__/ (generated once from the reference with ``--snapshot-update``
and reviewed against the spec; a missing snapshot fails). The snapshot file is named after this
module, so the snapshot test stays here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from syrupy.assertion import SnapshotAssertion

from conformance.areas.diagnostic.bound_checks import bound_applicable, bound_violation
from conformance.areas.diagnostic.grammar import compile_alternative, roots
from conformance.areas.diagnostic.oracle import (
    FACT_KEYS,
    bound,
    carries_http_status,
    expected_text,
    product,
    products,
    snapshot_cases,
    snapshot_requests,
    stage_categories,
)
from conformance.areas.diagnostic.snapshots import shipped_contracts
from conformance.areas.diagnostic.strategies import format_requests
from conformance.areas.diagnostic.text_blame import as_vector, format_blame, format_findings
from conformance.harness.adapter import Adapter
from conformance.plugin import contract
from conformance.spec import Spec, expand_text
from conformance.verdict.blame import Violation
from conformance.verdict.reach import row_params, share
from conformance.verdict.report import NOT_APPLICABLE

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"bound_diagnostic", "format_diagnostic"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = contract()  # the spec at the claimed product versions
_MATCHERS = roots(_SPEC)
_BOUND = bound(_SPEC)
PRODUCTS = [  # one per row of table products, each marked as reaching it
    pytest.param(param.values[0]["product"], id=param.values[0]["area"], marks=param.marks)
    for param in row_params(_SPEC, "diagnostic", "products")
]
# A sample observed value of each optional field (the field table's value column describes it).
SAMPLE_VALUES: Json = {"httpStatus": 0, "exitCode": 0, "signal": "SIGTERM"}
FAILURE_LINE = ["DIA-001", "DIA-002", "DIA-003", "DIA-004", "DIA-005", "DIA-006", "DIA-007", "DIA-008", "DIA-009"]


def _claim_product(claim: Claim, label: str) -> None:
    claim("providers", product(_SPEC, label).area)


def _format(adapter: Adapter, request: Json) -> str:
    text: str = adapter.call("format_diagnostic", request)["text"]
    return text


def _as_vector(request: Json, expected: str, covers: list[str]) -> dict[str, str]:
    row = {"name": "found-by-property", "covers": covers, "kind": request["kind"], "facts": request["facts"]}
    return as_vector("spec/diagnostic.yaml line_vectors", {**row, "expected": expected})


def _judge(request: Json, actual: str, expected: str | None = None, *, property_found: bool = False) -> None:
    """Raise a Violation of exactly the rules the difference shows (text_blame), unless the
    text is the one the spec gives for ``request``."""
    expected = expected_text(_SPEC, request) if expected is None else expected
    if actual == expected:
        return
    label = request["facts"]["product"]
    findings = format_findings(request["kind"], label, product(_SPEC, label).error_prefix, expected, actual)
    blamed = format_blame(findings) or ["DIA-002"]
    sections = _as_vector(request, expected, blamed)
    raise Violation(
        blamed,
        operation="format_diagnostic",
        input=request,
        expected={"text": expected},
        actual={"text": actual},
        sections=sections if property_found else None,
    )


def _check_grammar(label: str, kind: str, text: str, request: Json) -> None:
    if not _MATCHERS[(label, kind)].matches(text):
        raise Violation(
            ["DIA-018", "RED-002"],
            operation="format_diagnostic",
            input=request,
            expected=f"a sentence of the {kind} grammar of {label} (diagnostic.yaml grammar, grammar_roots)",
            actual={"text": text},
            detail=f"{text!r} is not a sentence of grammar root {_MATCHERS[(label, kind)].symbol}",
        )


# ---------------------------------------------------------------- golden vectors


@pytest.mark.parametrize(
    "vector",
    row_params(_SPEC, "diagnostic", "line_vectors", marks=lambda v: [requirement(*v["covers"])]),
)
def test_line_vector(adapter: Adapter, claim: Claim, vector: Json) -> None:
    _claim_product(claim, vector["facts"]["product"])
    request = {"kind": vector["kind"], "facts": vector["facts"]}
    expected = expand_text(vector["expected"])
    assert expected_text(_SPEC, request) == expected, "the suite's oracle disagrees with this vector"
    _judge(request, _format(adapter, request), expected)


@pytest.mark.parametrize(
    "vector",
    row_params(_SPEC, "diagnostic", "bound_vectors", marks=lambda v: [requirement(*v["covers"])]),
)
def test_bound_vector(adapter: Adapter, vector: Json) -> None:
    bound_applicable(adapter)
    text, expected = expand_text(vector["input"]), expand_text(vector["expected"])
    actual = adapter.call("bound_diagnostic", {"text": text})["text"]
    if actual != expected:
        raise bound_violation(_BOUND, text, expected, actual)


# ---------------------------------------------------------------- format_diagnostic properties


@requirement(*FAILURE_LINE, "DIA-010", "DIA-018")
@pytest.mark.parametrize("label", PRODUCTS)
def test_failure_line_fields_follow_the_field_table(adapter: Adapter, claim: Claim, spec: Spec, label: str) -> None:
    _claim_product(claim, label)

    @given(request=format_requests(spec, label, ["failure-line"]))
    def check(request: Json) -> None:
        text = _format(adapter, request)
        _judge(request, text, property_found=True)
        _check_grammar(label, "failure-line", text, request)

    check()


def _field_cases() -> list[Any]:
    """One case per (row of failure_line_fields, product the row names): a failure line of that
    product with that field observed (an HTTP status only where extraction yields one)."""
    cases = []
    for param in row_params(_SPEC, "diagnostic", "failure_line_fields"):
        row = param.values[0]
        for label in row["products"]:
            pairs = stage_categories(_SPEC, label, "run-result")
            key = FACT_KEYS[row["label"]]
            if key == "httpStatus":
                pairs = [(s, c) for s, c in pairs if carries_http_status(_SPEC, label, c)]
            stage, category = pairs[0]
            facts: Json = {"product": label, "stage": stage, "category": category}
            if key in SAMPLE_VALUES:
                facts[key] = SAMPLE_VALUES[key]
            request = {"kind": "failure-line", "facts": facts}
            cases.append(pytest.param(request, id=f"{row['label']}-{product(_SPEC, label).area}", marks=param.marks))
    return cases


@requirement(*FAILURE_LINE)
@pytest.mark.parametrize("request_", _field_cases())
def test_every_field_of_the_field_table(adapter: Adapter, claim: Claim, request_: Json) -> None:
    """Each row of failure_line_fields, for each product it names, printed as the table says."""
    _claim_product(claim, request_["facts"]["product"])
    _judge(request_, _format(adapter, request_), property_found=True)


@requirement("DIA-018", "RED-002")
@pytest.mark.parametrize("root", row_params(_SPEC, "diagnostic", "grammar_roots"))
def test_every_text_is_a_sentence_of_the_grammar(adapter: Adapter, claim: Claim, spec: Spec, root: Json) -> None:
    """Stratified by grammar root: each (product, kind) row draws only texts of its kind."""
    label, kind = root["product"], root["kind"]
    _claim_product(claim, label)

    @share(5)
    @given(request=format_requests(spec, label, [kind]))
    def check(request: Json) -> None:
        _check_grammar(label, kind, _format(adapter, request), request)

    check()


def _spec_texts(spec: Spec) -> list[str]:
    """Every provider text the spec writes out: line vectors, outcome vectors' diagnostics and the
    plain errors, each also cut into its lines, its rejection texts and its process fields."""
    whole = [expand_text(v["expected"]) for v in spec.table("diagnostic", "line_vectors").rows]
    for area in ("claude-code", "codex"):
        vectors = spec.table(area, "outcome_vectors").rows
        whole += [v["expected"]["diagnostic"] for v in vectors if "diagnostic" in v["expected"]]
        whole += [str(v) for v in spec.vocabulary(f"{area}.plain_error").values]
    parts = {"", *whole}
    prefixes = [p.error_prefix for p in products(spec)]
    for text in whole:
        for line in text.split("\n"):
            parts.add(line)
            for prefix in prefixes:  # the rejection texts an aggregate is made of, and their lines
                pieces = [piece if i == 0 else prefix + piece for i, piece in enumerate(line.split("; " + prefix))]
                parts.update(pieces)
                parts.update(piece.removeprefix(prefix) for piece in pieces)
            fields = line.rpartition(")")[0]
            for label in ("; exit code: ", "; signal: "):
                if label in fields:
                    parts.add(fields[fields.index(label) :])
    return sorted(parts)


@requirement("DIA-018")
@pytest.mark.claims("operations", "format_diagnostic")  # the grammar this tier holds format_diagnostic to
@pytest.mark.parametrize("row", row_params(_SPEC, "diagnostic", "grammar"))
def test_every_grammar_row_generates_texts_of_the_spec(spec: Spec, row: Json) -> None:
    """The grammar is consumed whole by the root matchers; this reaches each row on its own: the
    row, compiled alone, accepts at least one text the spec writes out (a vector, a plain error,
    or a line, rejection text or process-field run cut from one), so no row is dead or wrong."""
    index = spec.table("diagnostic", "grammar").rows.index(row)
    matcher = compile_alternative(spec, index)
    assert any(matcher.matches(text) for text in _spec_texts(spec)), (
        f"grammar row {index} ({row['symbol']}) accepts no text the spec writes out"
    )


@requirement("DIA-001", "DIA-011", "DIA-012", "DIA-013", "DIA-015", "DIA-016", "DIA-017")
@pytest.mark.parametrize("label", PRODUCTS)
def test_texts_compose_from_the_failure_and_permission_lines(
    adapter: Adapter, claim: Claim, spec: Spec, label: str
) -> None:
    """Permission lines, run-result diagnostics and rejection texts are the composition the
    spec gives (diagnostic.expected_text); a difference is blamed on the rule of its part."""
    _claim_product(claim, label)

    @given(
        request=format_requests(spec, label, ["permission-line", "run-result", "start-rejection", "dispose-rejection"])
    )
    def check(request: Json) -> None:
        _judge(request, _format(adapter, request), property_found=True)

    check()


# ---------------------------------------------------------------- snapshots


def _stage_row(label: str, stage: str) -> tuple[str, int]:
    """The product's stages row a snapshot reaches: every stage of both stages tables."""
    area = product(_SPEC, label).area
    rows = _SPEC.table(area, "stages").rows
    return f"{area}.stages", next(i for i, row in enumerate(rows) if row["stage"] == stage)


# The shipped snapshot file holds the pairs of every shipped version; those of the versions the
# adapter does not claim are not applicable here.
# The shipped snapshot file holds the pairs of every shipped version; a pair of another version
# than the one this run tests is not applicable here (skipped: syrupy keeps its snapshot).
_SNAPSHOT_CASES = {case: rest for contract in shipped_contracts(_SPEC) for case, *rest in snapshot_cases(contract)}
_TESTED_CASES = frozenset(case for case, *_ in snapshot_cases(_SPEC))


def _snapshot_param(case: str, label: str, stage: str, category: str) -> Any:
    if case in _TESTED_CASES:
        return pytest.param(label, stage, category, id=case, marks=pytest.mark.reaches(*_stage_row(label, stage)))
    area = _SPEC.areas[product(_SPEC, label).area]
    other = f"{NOT_APPLICABLE}{stage} / {category} is a pair of another {area.name} version than {area.version}"
    return pytest.param(label, stage, category, id=case, marks=pytest.mark.skip(reason=other))


@requirement(*FAILURE_LINE, "DIA-015", "DIA-016")
@pytest.mark.parametrize(
    ("label", "stage", "category"),
    [_snapshot_param(case, *rest) for case, rest in sorted(_SNAPSHOT_CASES.items())],
)
def test_snapshot_of_every_stage_and_category(
    adapter: Adapter, claim: Claim, spec: Spec, snapshot: SnapshotAssertion, label: str, stage: str, category: str
) -> None:
    """The committed snapshot of every text of the pair. A mismatch is blamed by comparing each
    text with the spec's oracle (the rule of the differing part), and shows the snapshot diff."""
    _claim_product(claim, label)
    requests = snapshot_requests(spec, label, stage, category)
    texts = {name: _format(adapter, request) for name, request in requests.items()}
    if snapshot == texts:
        return
    diff = "\n".join(snapshot.get_assert_diff())
    for name, request in requests.items():
        try:
            _judge(request, texts[name])
        except Violation as found:
            raise Violation(
                found.requirements,
                operation="format_diagnostic",
                input=request,
                expected=found.expected,
                actual=found.actual,
                sections={f"snapshot difference ({name})": diff},
            ) from None
    raise AssertionError(f"the texts agree with the spec's oracle but not with the committed snapshot:\n{diff}")
