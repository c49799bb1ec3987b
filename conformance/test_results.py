"""Tier 2, results: settle_run and render_tool_result against the golden vectors and the
spec's stop-reason and rendering tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from conformance.adapter import Adapter
from conformance.report import NOT_APPLICABLE
from conformance.results import expected_rendering, expected_settlement, settle_requests, subagent_results
from conformance.spec import Spec, load_spec

Claim = Callable[[str, str], None]
requirement = pytest.mark.requirement
_SPEC = load_spec()


def _any_binding(adapter: Adapter) -> None:
    if not adapter.declaration.get("bindings"):
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} claims no selection binding (settle/render belong to harnesses)")


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, id=v["name"], marks=requirement("RES-018", *v["covers"]))
        for v in _SPEC.table("results", "settle_vectors").rows
    ],
)
def test_settle_vector(adapter: Adapter, claim: Claim, vector: dict[str, Any]) -> None:
    claim("bindings", vector["input"]["binding"])
    assert adapter.call("settle_run", vector["input"]) == vector["expected"]


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, id=v["name"], marks=requirement("RES-027", *v["covers"]))
        for v in _SPEC.table("results", "render_vectors").rows
    ],
)
def test_render_vector(adapter: Adapter, vector: dict[str, Any]) -> None:
    _any_binding(adapter)
    assert adapter.call("render_tool_result", vector["result"]) == vector["expected"]


@requirement(
    "RES-001",
    "RES-002",
    "RES-003",
    "RES-004",
    "RES-005",
    "RES-006",
    "RES-007",
    "RES-008",
    "RES-009",
    "RES-010",
    "RES-011",
    "RES-012",
    "RES-013",
    "RES-014",
    "RES-015",
    "RES-016",
    "RES-017",
)
def test_settlement_follows_the_stop_reason_tables(adapter: Adapter, spec: Spec) -> None:
    _any_binding(adapter)

    def bound(text: str) -> Any:  # the bound itself is checked against its own vectors
        return adapter.call("bound_diagnostic", {"text": text})["text"]

    @given(request=settle_requests(spec))
    def check(request: dict[str, Any]) -> None:
        if not adapter.claims("bindings", request["binding"]):
            return
        actual = adapter.call("settle_run", request)
        expected = expected_settlement(spec, request, bound)
        assert actual == expected, f"settle_run({request}) gave {actual}, the spec says {expected}"

    check()


@requirement("RES-020", "RES-021", "RES-022", "RES-023", "RES-024", "RES-025", "RES-026")
def test_rendering_follows_the_headline_and_fragment_tables(adapter: Adapter, spec: Spec) -> None:
    _any_binding(adapter)

    @given(result=subagent_results(spec))
    def check(result: dict[str, Any]) -> None:
        assert adapter.call("render_tool_result", result) == expected_rendering(spec, result)

    check()
