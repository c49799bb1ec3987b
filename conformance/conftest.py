"""The suite's fixtures, scoped to its package as pytest intends: a user's tests never see them.

They read the run's session, which ``conformance.plugin`` sets up when the run asks for the
suite (``subagent_conformance_plugin`` decides)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.adapter import Adapter
from conformance.plugin import session_of
from conformance.report import NOT_APPLICABLE
from conformance.spec import Spec


@pytest.fixture(scope="session")
def spec(pytestconfig: pytest.Config) -> Spec:
    """The loaded contract."""
    return session_of(pytestconfig).spec


@pytest.fixture(scope="session")
def adapter(pytestconfig: pytest.Config) -> Adapter:
    """The implementation under test, as --impl names it."""
    return session_of(pytestconfig).adapter


@pytest.fixture(scope="session")
def claim(adapter: Adapter) -> Callable[[str, str], None]:
    """``claim("bindings", "chunk-events")``: go on only if the adapter claims it; else not applicable."""

    def need(kind: str, value: str) -> None:
        if not adapter.claims(kind, value):
            pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} does not claim {kind} {value!r}")

    return need
