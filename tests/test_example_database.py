"""A failure a property saved is replayed by the same test next time, and by no other: the suite's
properties are @given functions inside parametrized tests, which Hypothesis's pytest plugin does
not key apart, so the suite's database prefixes each key with its test (profiles.PerTestDatabase).
Before, every case of a test shared one key: a passing sibling case replayed the example a failing
case had saved, found it passing and deleted it, and `--lf` drew afresh (a CI run saw that)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis.database import InMemoryExampleDatabase

from conformance.harness.profiles import PerTestDatabase, keyed

# The reference, with a fold wrong for chunk-events only, where a log holds a tool call: the
# selection properties' fixed logs hold none, so only a draw finds it; the other bindings' cases
# of the same test pass.
WRONG_ON_TOOL_CALLS = """
import reference_impl
from reference_impl import *

CONFORMANCE = {**reference_impl.CONFORMANCE, "providers": {}, "process_drivers": []}
CONFORMANCE.pop("background", None)


def fold_output(request):
    values = reference_impl.fold_output(request)
    calls = any(s.get("event", {}).get("type") == "tool/call" for s in request["steps"])
    return [None for _ in values] if calls and request["binding"] == "chunk-events" else values
"""


class _Item:
    def __init__(self, name: str) -> None:
        self.name, self.nodeid = name, name


def test_each_test_has_its_own_examples() -> None:
    db = PerTestDatabase(InMemoryExampleDatabase())
    with keyed(_Item("a[chunk-events]")):  # type: ignore[arg-type]
        db.save(b"k", b"failing")
    with keyed(_Item("a[text-stream]")):  # type: ignore[arg-type]
        assert list(db.fetch(b"k")) == []
        db.delete(b"k", b"failing")  # a sibling's replay that passed deletes nothing of another case
    with keyed(_Item("a[chunk-events]")):  # type: ignore[arg-type]
        assert list(db.fetch(b"k")) == [b"failing"]
        db.move(b"k", b"k.secondary", b"failing")
        assert list(db.fetch(b"k.secondary")) == [b"failing"]


def test_a_saved_failure_outlives_its_passing_siblings(tmp_path: Path) -> None:
    """A fresh interpreter, not a nested session: this process's Hypothesis profiles already hold
    their database (tests/test_guest.py)."""
    (tmp_path / "wrong_on_tool_calls.py").write_text(WRONG_ON_TOOL_CALLS, encoding="utf-8")
    store = tmp_path / "hypothesis"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env |= {"SUBAGENT_CONFORMANCE_PROFILE": "default", "HYPOTHESIS_STORAGE_DIRECTORY": str(store)}
    env |= {"PYTHONPATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", "-p", "no:cacheprovider",
         "--pyargs", "conformance.test_selection", "-k", "test_fold_after_every_prefix",
         "--impl=wrong_on_tool_calls", "-rf"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    failed = re.findall(r"^FAILED \S+::(\S+)", run.stdout, flags=re.MULTILINE)
    assert failed == ["test_fold_after_every_prefix_is_the_rule_on_that_prefix[chunk-events]"], run.stdout[-3000:]
    saved = [p for p in (store / "examples").rglob("*") if p.is_file()]
    assert saved, "the failing case's example was deleted by the cases that ran after it"
