"""The suite's fixtures, scoped to its package as pytest intends: a user's tests never see them.

They read the run's session, which ``conformance.plugin`` sets up when the run asks for the
suite (``subagent_conformance_plugin`` decides)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.adapter import Adapter
from conformance.harness.claims import OPERATIONS, Claims
from conformance.plugin import CLAIMS_MARKER, session_of
from conformance.process import ahead
from conformance.session import requirement_ids
from conformance.spec import Spec
from conformance.verdict.report import NOT_APPLICABLE, UNCHECKED_PROPERTY


@pytest.fixture(scope="session")
def spec(pytestconfig: pytest.Config) -> Spec:
    """The loaded contract."""
    return session_of(pytestconfig).spec


@pytest.fixture(scope="session")
def adapter(pytestconfig: pytest.Config) -> Adapter:
    """The implementation under test, as --impl names it."""
    return session_of(pytestconfig).adapter


_CLAIMS = pytest.StashKey[Claims]()


def _claims(config: pytest.Config) -> Claims:
    """The run's claims, computed once (conformance/harness/claims.py)."""
    if _CLAIMS not in config.stash:
        session = session_of(config)
        config.stash[_CLAIMS] = Claims.of(session.adapter.declaration, session.spec)
    return config.stash[_CLAIMS]


def _unclaimed(impl: str, kind: str, value: str) -> str:
    what = "implement operation" if kind == OPERATIONS else f"claim {kind}"
    return f"{NOT_APPLICABLE}{impl} does not {what} {value!r}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test (parameter) marked ``claims`` that needs what the adapter does not claim is not
    applicable, decided before any other reason to skip it (an opt-in tier that is off): what the
    adapter does not claim is never reported as untestable here (ADP-009)."""
    needed = [mark.args for mark in item.iter_markers(CLAIMS_MARKER)]
    if not needed:
        return
    claims = _claims(item.config)
    for kind, value in needed:
        if not claims.claims(kind, value):
            pytest.skip(_unclaimed(session_of(item.config).adapter.impl, kind, value))


@pytest.fixture(scope="session")
def claim(adapter: Adapter, pytestconfig: pytest.Config) -> Callable[[str, str], None]:
    """``claim("bindings", "chunk-events")``, ``claim("settlements", "continuable")``,
    ``claim("operations", "select_output")``: go on only if the adapter claims it; else not applicable."""
    claims = _claims(pytestconfig)

    def need(kind: str, value: str) -> None:
        if not claims.claims(kind, value):
            pytest.skip(_unclaimed(adapter.impl, kind, value))

    return need


Unchecked = Callable[[Iterable[str], str], None]


@pytest.fixture
def unchecked(request: pytest.FixtureRequest) -> Unchecked:
    """``unchecked(ids, why)``: this test did not check ``ids`` after all (an operation not
    claimed, ``why`` then starting "not applicable: "; a condition that never arose), so their
    status never reads passed from it (conformance/verdict/report.py)."""

    def record(ids: Iterable[str], why: str) -> None:
        marked = set(requirement_ids(request.node))
        found = {rid: why for rid in ids if rid in marked}
        if found:
            request.node.user_properties.append((UNCHECKED_PROPERTY, json.dumps(found)))

    return record


@pytest.fixture
def codex_outcome(adapter: Adapter, claim: Callable[[str, str], None]) -> Callable[[Any], Any]:
    """codex_outcome of the adapter, once it claims the Codex provider (the Codex tiers' one door)."""
    claim("providers", "codex")
    return lambda request: adapter.call("codex_outcome", request)


@pytest.fixture(scope="session", autouse=True)
def _played_ahead(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ahead.Ahead | None]:
    """The process tier's calls, started in the background as the run's first test begins
    (conformance/process/ahead.py); each marked test then checks what its call gave."""
    session = session_of(request.config)
    if not ahead.can_play_ahead(request.config, session.adapter):
        yield None
        return
    played = ahead.Ahead(
        session.adapter, session.spec, lambda name: tmp_path_factory.mktemp(re.sub(r"\W", "_", name)[:30])
    )
    played.start(request.session.items)  # the marked ones
    try:
        yield played
    finally:
        played.close()


@pytest.fixture
def played(
    request: pytest.FixtureRequest, adapter: Adapter, spec: Spec, tmp_path: Path, _played_ahead: ahead.Ahead | None
) -> ahead.Played:
    """``played(check)``: check the outcome of the test's call (``@ahead.plays``) played ahead, else
    (or when that does not pass) make the call now, alone, and check that."""
    return lambda check: ahead.play(request.node, _played_ahead, adapter, spec, tmp_path, check)
