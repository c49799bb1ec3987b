"""Tier 2, results: settle_run and render_tool_result against the golden vectors and the
spec's stop-reason and rendering tables.

Every table row is its own test: a stratified property draws only inputs of that row (and
column), so each cell is checked in every run. Failures are blamed field by field
(conformance/areas/results/oracle.py) and print a paste-ready vector.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.diagnostic.oracle import bound as diagnostic_bound
from conformance.areas.results.oracle import (
    check_rendering,
    check_settlement,
    column_requirement,
    expected_rendering,
    expected_settlement,
)
from conformance.areas.results.strategies import (
    blank_partial_results,
    continuable_requests,
    one_shot_requests,
    out_of_process_requests,
    rendered_results,
    unicode_out_of_process_requests,
    unicode_rendered_results,
)
from conformance.harness.adapter import Adapter
from conformance.harness.claims import settlement_of
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import golden_vector
from conformance.verdict.reach import row_params, share
from conformance.verdict.report import NOT_APPLICABLE

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"fold_output", "render_tool_result", "settle_run"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = load_spec()
_RESULT_FIELDS = ("RES-001", "RES-002", "RES-003", "RES-004", "RES-005", "RES-006", "RES-007", "RES-008")


def _any_binding(adapter: Adapter) -> None:
    if not adapter.declaration.get("bindings"):
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no selection binding (settle/render belong to harnesses)")


def _bound(spec: Spec) -> Callable[[str], Any]:
    """The bound a settlement's expected diagnostic is cut with: the contract's own (DIA-019,
    DIA-020, computed by the suite), never the adapter's bound_diagnostic, so the settlement rows
    run for a harness that does not implement it, and a correct settle_run is never held to a
    wrong bound_diagnostic (which its own tests reject)."""
    return diagnostic_bound(spec).expected


def _probe(adapter: Adapter) -> Callable[[Json], Any]:
    """The adapter's own fold over a run's own steps: its value after each of them (None for a
    binding it does not claim: a diagnosis may ask about other bindings' logs)."""

    def selected(request: Json) -> Any:
        if not adapter.claims("bindings", request["binding"]):
            return None
        own = request["steps"][request["boundary"] :]
        return adapter.call("fold_output", {"binding": request["binding"], "steps": own})

    return selected


_PATHS = [row["settlement"] for row in _SPEC.table("adapter-protocol", "settlements").rows]


def _settles(path: str) -> list[pytest.MarkDecorator]:
    """What a settle_run test of settlement path ``path`` needs claimed (ADP-026), checked first,
    and the row of table adapter-protocol.settlements it reaches."""
    return [
        pytest.mark.claims("operations", "settle_run"),
        pytest.mark.claims("settlements", path),
        pytest.mark.reaches("adapter-protocol.settlements", _PATHS.index(path)),
    ]


def _path(path: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def mark(test: Callable[..., None]) -> Callable[..., None]:
        for marker in _settles(path):
            test = marker(test)
        return test

    return mark


def _claimed(adapter: Adapter, requests: st.SearchStrategy[Json]) -> st.SearchStrategy[Json]:
    """Only runs of a claimed binding: a test of a claimed path checks every example it draws."""
    return requests.filter(lambda request: adapter.claims("bindings", request["binding"]))


def _settle(adapter: Adapter, spec: Spec, request: Json) -> None:
    actual = adapter.call("settle_run", request)
    expected = expected_settlement(spec, request, _bound(spec))
    check_settlement(spec, request, expected, actual, _probe(adapter))


@pytest.mark.parametrize(
    "vector",
    row_params(
        _SPEC,
        "results",
        "settle_vectors",
        marks=lambda v: [
            requirement("RES-018", *v["covers"]),
            pytest.mark.claims("bindings", v["input"]["binding"]),
            *_settles(settlement_of(_SPEC, v["input"])),
        ],
    ),
)
def test_settle_vector(adapter: Adapter, spec: Spec, vector: Json) -> None:
    with golden_vector(spec, "results", "settle_vectors", vector, operations=("settle_run",)):
        actual = adapter.call("settle_run", vector["input"])
        check_settlement(spec, vector["input"], vector["expected"], actual, _probe(adapter))


@pytest.mark.parametrize(
    "vector", row_params(_SPEC, "results", "render_vectors", marks=lambda v: [requirement("RES-027", *v["covers"])])
)
def test_render_vector(adapter: Adapter, spec: Spec, vector: Json) -> None:
    _any_binding(adapter)
    with golden_vector(spec, "results", "render_vectors", vector, operations=("render_tool_result",)):
        rendered = adapter.call("render_tool_result", vector["result"])
        check_rendering(spec, vector["result"], vector["expected"], rendered)


_ONE_SHOT = row_params(_SPEC, "results", "one_shot_stop_reasons")
_CONTINUABLE = row_params(_SPEC, "results", "continuable_stop_reasons")


def _columns(table: str, flag: str, columns: tuple[str, str]) -> pytest.MarkDecorator:
    """``flag`` False and True as the two columns of ``table``, each marked with the requirement
    that reads its column (the one a wrong stop reason there is blamed on)."""
    return pytest.mark.parametrize(
        flag,
        [
            pytest.param(value, id=column, marks=requirement(column_requirement(_SPEC, table, column)))
            for value, column in zip((False, True), columns, strict=True)
        ],
    )


@_path("in-process-one-shot")
@requirement(*_RESULT_FIELDS, "RES-009")
@_columns("one_shot_stop_reasons", "cancelled", ("recorded", "cancelled"))
@pytest.mark.parametrize("row", _ONE_SHOT)
def test_one_shot_settlement_follows_its_row(adapter: Adapter, spec: Spec, row: Json, cancelled: bool) -> None:
    @share(2 * len(_ONE_SHOT))
    @given(request=_claimed(adapter, one_shot_requests(row["turn_end"], cancelled)))
    def check(request: Json) -> None:
        _settle(adapter, spec, request)

    check()


@_path("continuable")
@requirement(*_RESULT_FIELDS, "RES-009")
@_columns("continuable_stop_reasons", "dropped", ("kept", "dropped"))
@pytest.mark.parametrize("row", _CONTINUABLE)
def test_continuable_settlement_follows_its_row(adapter: Adapter, spec: Spec, row: Json, dropped: bool) -> None:
    @share(2 * len(_CONTINUABLE))
    @given(request=_claimed(adapter, continuable_requests(row["turn_end"], dropped)))
    def check(request: Json) -> None:
        _settle(adapter, spec, request)

    check()


@_path("continuable")
@requirement("RES-005", "RES-006", "RES-014")
@pytest.mark.parametrize("row", _CONTINUABLE)
def test_continuable_teardown_failure_withholds_the_result(adapter: Adapter, spec: Spec, row: Json) -> None:
    @share(len(_CONTINUABLE))
    @given(request=_claimed(adapter, continuable_requests(row["turn_end"], False, teardown_failed=True)))
    def check(request: Json) -> None:
        _settle(adapter, spec, request)

    check()


_OUT_OF_PROCESS = row_params(
    _SPEC, "results", "out_of_process_settlement", marks=lambda row: [requirement(*row["requirement"])]
)


@_path("out-of-process")
@requirement(*_RESULT_FIELDS)
@pytest.mark.parametrize("row", _OUT_OF_PROCESS)
def test_out_of_process_settlement_follows_its_row(adapter: Adapter, spec: Spec, row: Json) -> None:
    claimed = [str(b) for b in spec.vocabulary("selection.binding").values if adapter.claims("bindings", str(b))]
    for request in (
        unicode_out_of_process_requests(spec, claimed[0], row["attempt"], row["cancelled"]) if claimed else []
    ):
        _settle(adapter, spec, request)  # output, stop reasons and diagnostics from all of Unicode, every run

    @share(len(_OUT_OF_PROCESS))
    @given(request=_claimed(adapter, out_of_process_requests(spec, row["attempt"], row["cancelled"])))
    def check(request: Json) -> None:
        _settle(adapter, spec, request)

    check()


def _render_cases() -> list[Any]:
    """One case per headline row × diagnostic × partial text, inside the domain (RES-029): the
    row rendered as a success (no headline: completed) never carries a diagnostic; every other
    row is drawn with and without one, aborted included (a remotely diagnosed abort, BGD-003)."""
    cases = []
    for param in row_params(_SPEC, "results", "headlines"):
        [row] = param.values
        for diagnostic in (False, True):
            if diagnostic and row["headline"] is None:
                continue
            for text in (False, True):
                marks = [*param.marks]
                if row["headline"] is not None:  # the error rendering's fragments
                    marks.append(pytest.mark.reaches("results.render_fragments", 0))
                    marks += [pytest.mark.reaches("results.render_fragments", 3)] if diagnostic else []
                    marks += [pytest.mark.reaches("results.render_fragments", 4)] if text else []
                cid = f"{param.id}-{'diagnostic' if diagnostic else 'plain'}-{'text' if text else 'no-text'}"
                cases.append(pytest.param(row["stop_reason"], diagnostic, text, id=cid, marks=marks))
    for diagnostic in (False, True):
        for text in (False, True):
            marks = [pytest.mark.reaches("results.render_fragments", 0, 1, 2)]
            marks += [pytest.mark.reaches("results.render_fragments", 3)] if diagnostic else []
            marks += [pytest.mark.reaches("results.render_fragments", 4)] if text else []
            cid = f"unnamed-{'diagnostic' if diagnostic else 'plain'}-{'text' if text else 'no-text'}"
            cases.append(pytest.param(None, diagnostic, text, id=cid, marks=marks))
    return cases


_RENDER_CASES = _render_cases()


@requirement("RES-020", "RES-021", "RES-022", "RES-023", "RES-024", "RES-025", "RES-026")
@pytest.mark.parametrize(("stop", "diagnostic", "text"), _RENDER_CASES)
def test_rendering_follows_the_headline_and_fragment_tables(
    adapter: Adapter, spec: Spec, stop: str | None, diagnostic: bool, text: bool
) -> None:
    _any_binding(adapter)
    for blank in blank_partial_results(spec, stop, diagnostic) if text else []:  # a stratum, every run
        check_rendering(spec, blank, expected_rendering(spec, blank), adapter.call("render_tool_result", blank))
    for fixed in unicode_rendered_results(stop, diagnostic, text):  # all of Unicode, whole blocks: every run
        check_rendering(spec, fixed, expected_rendering(spec, fixed), adapter.call("render_tool_result", fixed))

    @share(len(_RENDER_CASES))
    @given(result=rendered_results(spec, stop, diagnostic, text))
    def check(result: Json) -> None:
        check_rendering(spec, result, expected_rendering(spec, result), adapter.call("render_tool_result", result))

    check()
