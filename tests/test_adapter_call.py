"""Adapter.call keeps the suite's values its own: a Python operation works on a copy of its
input, and the suite keeps its own copy of the answer (checked to be JSON-shaped)."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

import reference_impl
from conformance.harness.adapter import Adapter, AdapterResponseError
from conformance.spec import load_spec

SPEC = load_spec()
VECTOR = max(SPEC.table("selection", "golden_vectors").rows, key=lambda row: len(row["steps"]))
REQUEST = {"binding": VECTOR["binding"], "steps": VECTOR["steps"]}


def _adapter(fold: Any) -> Adapter:
    return Adapter("test", dict(reference_impl.CONFORMANCE), SimpleNamespace(fold_output=fold), SPEC)


def test_an_operation_that_changes_its_input_does_not_change_the_suites() -> None:
    def fold(request: Any) -> Any:
        answer = reference_impl.fold_output(copy.deepcopy(request))
        request["steps"].clear()
        request["binding"] = "changed"
        return answer

    payload = copy.deepcopy(REQUEST)
    answer = _adapter(fold).call("fold_output", payload)
    assert payload == REQUEST
    assert answer == reference_impl.fold_output(copy.deepcopy(REQUEST))


def test_an_answer_changed_after_it_was_returned_does_not_change_the_suites() -> None:
    kept: list[Any] = []

    def fold(request: Any) -> Any:
        kept.append(reference_impl.fold_output(request))
        return kept[-1]

    answer = _adapter(fold).call("fold_output", copy.deepcopy(REQUEST))
    expected = copy.deepcopy(answer)
    kept[-1].append("changed later")
    assert answer == expected


def test_an_answer_that_is_not_json_shaped_is_refused() -> None:
    def fold(request: Any) -> Any:
        return [{1, 2} for _ in request["steps"]]

    with pytest.raises(AdapterResponseError, match="not JSON-shaped"):
        _adapter(fold).call("fold_output", copy.deepcopy(REQUEST))
