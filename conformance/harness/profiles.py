"""The Hypothesis profiles of the suite, for the suite's own tests only.

Registered under names of their own (``subagent-conformance-<name>``): registering Hypothesis's
``default`` would re-load it and change the settings of every other test in the process.
``$SUBAGENT_CONFORMANCE_PROFILE`` names one by its short name; it is read only when the suite
runs, and a value that names no profile stops only the suite's run, with a usage error.

A guest in the user's repository writes nothing there: around the suite's own tests (``stored``)
Hypothesis keeps its database and caches under the suite's cache folder, not ``.hypothesis/`` in
the working folder; ``$HYPOTHESIS_STORAGE_DIRECTORY``, when set, is the user's choice and kept.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, configuration, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.internal.conjecture import engine

from conformance.spec import cache_dir

VARIABLE = "SUBAGENT_CONFORMANCE_PROFILE"
_PREFIX = "subagent-conformance-"
EXEC_SUFFIX = "-exec"  # a profile's variant for an exec adapter: no explain phase

# "default" for development; "ci" derandomized so that a CI log reproduces; "thorough" for
# deeper runs before a release or a product-version bump; "selftest" finds a known-bad adapter
# fast and skips shrinking, since only the verdict matters there.
PROFILES: dict[str, dict[str, Any]] = {
    "default": {"max_examples": 100, "deadline": None},
    "ci": {
        "max_examples": 100,
        "deadline": None,
        "derandomize": True,
        "print_blob": True,
        "suppress_health_check": [HealthCheck.too_slow],
    },
    "thorough": {"max_examples": 2000, "deadline": None, "suppress_health_check": [HealthCheck.too_slow]},
    "selftest": {
        "max_examples": 100,
        "deadline": None,
        "derandomize": True,
        "phases": [Phase.explicit, Phase.reuse, Phase.generate],
        "suppress_health_check": list(HealthCheck),
    },
}


# Over the exec pipe every try of a failing example is a round trip (issue #30, item 5): a red run
# cost several times a green one (benchmarks/red_run.py; docs/measurements/2026-12-02/red-run.md),
# most of it Hypothesis's explain phase (it varies each part of the shrunk example to say which
# parts matter). For an exec adapter the profiles run without it (EXEC_SUFFIX), and the successful
# shrinks of one example are bounded (counted, so deterministic) below Hypothesis's own 500.
EXEC_MAX_SHRINKS = 25


@contextlib.contextmanager
def bounded_shrinking(over_exec: bool) -> Iterator[None]:
    """Around one of the suite's tests: shrinking bounded by EXEC_MAX_SHRINKS for an exec adapter.
    Hypothesis has no setting for it; its engine reads the module's MAX_SHRINKS at each shrink
    (tests/test_red_run_bound.py fails if a Hypothesis release drops it)."""
    previous = engine.MAX_SHRINKS
    if over_exec:
        engine.MAX_SHRINKS = min(previous, EXEC_MAX_SHRINKS)
    try:
        yield
    finally:
        engine.MAX_SHRINKS = previous


class ProfileError(ValueError):
    """``$SUBAGENT_CONFORMANCE_PROFILE`` names no profile of the suite."""


def storage() -> Path:
    """Where the suite's Hypothesis writes: $HYPOTHESIS_STORAGE_DIRECTORY, else the suite's cache folder."""
    where = os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY")
    return Path(where) if where else cache_dir() / "hypothesis"


@contextlib.contextmanager
def stored() -> Iterator[None]:
    """Hypothesis's home (its caches: Unicode tables, constants) in ``storage()`` for one of the
    suite's tests, and back to what it was for the user's own."""
    previous = getattr(configuration, "__hypothesis_home_directory", None)  # None: $HYPOTHESIS_STORAGE_DIRECTORY or ./
    configuration.set_hypothesis_home_dir(storage())
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


# The suite's properties are @given functions inside its parametrized tests, out of sight of
# Hypothesis's pytest plugin, which keys each parametrized case's examples apart (by node id) only
# for a test that is itself a @given test. Keyed by the inner function's source alone, every case
# of a test (each binding, each row) shared one key: a passing sibling replayed the example a
# failing case had saved, found it passing and deleted it, so `--lf` drew afresh and could pass.
_TEST: contextvars.ContextVar[bytes] = contextvars.ContextVar("subagent_conformance_test", default=b"")


class PerTestDatabase(ExampleDatabase):
    """Hypothesis's example database with each key prefixed by the suite's test it is used in
    (:func:`keyed`), so that the examples one parametrized case saved are replayed in that case only."""

    def __init__(self, inner: ExampleDatabase) -> None:
        super().__init__()
        self.inner = inner

    def __repr__(self) -> str:
        return f"PerTestDatabase({self.inner!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PerTestDatabase) and self.inner == other.inner

    def __hash__(self) -> int:
        return hash(("PerTestDatabase", repr(self.inner)))

    @staticmethod
    def _key(key: bytes) -> bytes:
        test = _TEST.get()
        return test + b"\x00" + key if test else key

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self._key(key), value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self._key(key))

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self._key(key), value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self._key(src), self._key(dest), value)


def test_key(item: pytest.Item) -> str:
    """What keys a test's examples apart: its module and name with parameters, the same whatever
    the rootdir or however the suite was named on the command line."""
    module = getattr(getattr(item, "module", None), "__name__", None)
    return f"{module}::{item.name}" if module else item.nodeid


@contextlib.contextmanager
def keyed(item: pytest.Item) -> Iterator[None]:
    """Around one of the suite's tests: the example database keyed by that test (PerTestDatabase)."""
    token = _TEST.set(test_key(item).encode())
    try:
        yield
    finally:
        _TEST.reset(token)


def register_profiles() -> None:
    for name, values in PROFILES.items():
        if _PREFIX + name not in settings._profiles:  # registered once: re-registering re-loads
            # Not ./.hypothesis; a derandomized profile keeps none (Hypothesis: it implies database=None).
            stored_in: dict[str, Any] = {}
            if not values.get("derandomize"):
                stored_in["database"] = PerTestDatabase(DirectoryBasedExampleDatabase(storage() / "examples"))
            settings.register_profile(_PREFIX + name, **stored_in, **values)
            phases = [p for p in values.get("phases", list(Phase)) if p is not Phase.explain]
            settings.register_profile(_PREFIX + name + EXEC_SUFFIX, **stored_in, **{**values, "phases": phases})


def chosen() -> str:
    """The short name the environment asks for ($SUBAGENT_CONFORMANCE_PROFILE, else ci on CI)."""
    return os.environ.get(VARIABLE) or ("ci" if os.environ.get("CI") else "default")


def check(name: str) -> None:
    if name not in PROFILES:
        raise ProfileError(
            f"{VARIABLE}={name!r} names no Hypothesis profile of the suite; its profiles are {', '.join(PROFILES)}"
        )


def settings_of(name: str) -> settings:
    register_profiles()
    check(name)
    return settings.get_profile(_PREFIX + name)


def load(name: str, over_exec: bool = False) -> None:
    """Make profile ``name`` (a short name) the one in force; its exec variant for an exec adapter."""
    register_profiles()
    check(name)
    settings.load_profile(_PREFIX + name + (EXEC_SUFFIX if over_exec else ""))
