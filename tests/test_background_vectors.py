"""The background golden vectors agree with the rules they illustrate: each vector's outcome is the
oracle's for its input, its text job_output's for that outcome, and each notice vector the
oracle's notice, so a typo in spec/background.yaml cannot pass for a rule."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.areas.background.oracle import (
    expected_job_notice,
    expected_job_text,
    expected_notice,
    expected_outcome,
)
from conformance.spec import load_spec

_SPEC = load_spec()


@pytest.mark.parametrize("vector", _SPEC.table("background", "job_vectors").rows, ids=lambda v: v["name"])
def test_job_vector_follows_the_rules(vector: dict[str, Any]) -> None:
    assert expected_outcome(_SPEC, vector["input"]) == vector["outcome"]
    assert expected_job_text(_SPEC, vector["outcome"]) == vector["text"]


@pytest.mark.parametrize("vector", _SPEC.table("background", "notice_vectors").rows, ids=lambda v: v["name"])
def test_notice_vector_follows_the_rules(vector: dict[str, Any]) -> None:
    assert expected_notice(_SPEC, vector["input"]) == vector["expected"]


@pytest.mark.parametrize("vector", _SPEC.table("background", "completion_vectors").rows, ids=lambda v: v["name"])
def test_completion_vector_follows_the_rules(vector: dict[str, Any]) -> None:
    outcome = expected_outcome(_SPEC, vector["input"]["settled"])
    assert expected_job_notice(_SPEC, vector["input"], outcome) == vector["expected"]
