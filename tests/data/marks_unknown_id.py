"""A pytest plugin for tests/test_coverage_gate.py: one of the suite's own tests gains a
requirement marker naming an ID the spec does not define."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_itemcollected(item: pytest.Item) -> None:
    if item.name == "test_golden_vector_names_are_unique":
        item.add_marker(pytest.mark.requirement("SEL-001", "SEL-998"))
