"""Requirement coverage: which collected tests name which requirement, and the gate that fails
the collection of a whole-suite run that leaves a requirement without a test.

One mechanism serves both: :class:`RequirementGate` counts the markers of every test as it
is collected (before ``-k``, ``--requirement`` or any other deselection), in the one
collection pass of the run; ``subagent-conformance coverage`` runs a collection-only session
of the whole suite and prints what the gate counted.

A run is the *whole suite* when every ``conformance/test_*.py`` module was collected, no test
was deselected and no argument names a single test (``path::name``). Only then can a
requirement without a test be told from one whose tests were left out on purpose, so only then
does the gate demand a test of every requirement that is not ``excluded``. A requirement with
``tested_by: project`` (spec/schema/common.json) is checked by the project's own tests
(``tests/`` of a checkout, not shipped in the wheel); it is demanded only when every
``tests/test_*.py`` module was collected as well.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.spec import Requirement, Spec
from conformance.spec.resources import PACKAGE, project_tests_dir
from conformance.verdict.reach import reached

PROJECT = "project"  # the value of a requirement's ``tested_by``
GATE_KEY = pytest.StashKey["RequirementGate"]()


def _modules(folder: Path) -> frozenset[Path]:
    return frozenset(path.resolve() for path in folder.glob("test_*.py"))


@dataclass(frozen=True)
class Scope:
    """What a run collected in full: the conformance tests, and the project's own tests."""

    conformance: bool
    project: bool


def untested(spec: Spec, tests: Mapping[str, Sequence[str]], scope: Scope) -> list[Requirement]:
    """The requirements a run of this scope must have a test of, and has none of."""
    if not scope.conformance:
        return []
    return [
        req
        for req in spec.requirements()
        if req.excluded is None and not tests.get(req.id) and (scope.project or req.tested_by != PROJECT)
    ]


def location(spec: Spec, req: Requirement) -> str:
    """``spec/<area>.yaml:<line>`` of a requirement's entry."""
    return f"{spec.root.name}/{spec.areas[req.area].file}:{req.line}"


def describe(spec: Spec, reqs: Sequence[Requirement]) -> str:
    """One line per requirement: its ID, where it is stated, its title."""
    width = max((len(location(spec, r)) for r in reqs), default=0)
    return "\n".join(f"  {r.id}  {location(spec, r):<{width}}  {r.title}" for r in reqs)


class RequirementGate:
    """Counts the requirement markers of every collected test; when collection ends, fails it
    (once, as a collection error, so that pytest-xdist reports it once and runs nothing) if a
    marker names an ID the spec does not define, or if a whole-suite run leaves a requirement
    without a test."""

    def __init__(self, spec: Spec, requirement_ids: Callable[[pytest.Item], Sequence[str]]) -> None:
        self.spec = spec
        self.requirement_ids = requirement_ids
        self.tests: dict[str, list[str]] = {}
        self.reached: set[tuple[str, int]] = set()  # (area.table, row index): conformance/verdict/reach.py
        self.reached_by: dict[str, set[tuple[str, int]]] = {}  # requirement -> the rows its tests reach
        self.modules: set[Path] = set()
        self.collected = 0
        self.scope = Scope(conformance=False, project=False)
        self.unknown: list[str] = []
        self.untested: list[Requirement] = []
        self.report: pytest.CollectReport | None = None

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        if isinstance(collector, pytest.Module):
            self.modules.add(collector.path.resolve())

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        self.collected += 1
        rows = set(reached(item))
        for rid in self.requirement_ids(item):
            self.tests.setdefault(rid, []).append(item.nodeid)
            self.reached_by.setdefault(rid, set()).update(rows)
        self.reached.update(rows)

    def _scope(self, session: pytest.Session) -> Scope:
        if len(session.items) < self.collected or any("::" in arg for arg in session.config.args):
            return Scope(conformance=False, project=False)
        conformance = _modules(PACKAGE) <= self.modules
        tests = project_tests_dir()
        return Scope(conformance, conformance and tests is not None and _modules(tests) <= self.modules)

    # Before pytest-xdist sends a worker's collection to the controller: a failed gate leaves none.
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        known = {req.id for req in self.spec.requirements()}
        self.unknown = sorted(
            f"{node}: {rid}" for rid, nodes in self.tests.items() if rid not in known for node in nodes
        )
        self.scope = self._scope(session)
        self.untested = untested(self.spec, self.tests, self.scope)
        problems = []
        if self.unknown:
            problems.append("requirement markers name IDs the spec does not define:\n  " + "\n  ".join(self.unknown))
        if self.untested:
            problems.append(
                f"requirement coverage gate: {len(self.untested)} requirement(s) that are not excluded are named "
                f"by no collected test (`subagent-conformance coverage` lists every requirement's tests):\n"
                + describe(self.spec, self.untested)
            )
        if problems:
            self.report = pytest.CollectReport("", "failed", "\n\n".join(problems), [])
            session.config.hook.pytest_collectreport(report=self.report)
            session.items.clear()


class _Watcher:
    """Keeps the session's config, and every failed collection report but the gate's own."""

    def __init__(self) -> None:
        self.config: pytest.Config | None = None
        self.failures: list[pytest.CollectReport] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.failures.append(report)


def collect_whole_suite(plugins: Sequence[object] = ()) -> RequirementGate:
    """Collect the conformance tests and, in a checkout, the project's own tests, in one
    collection-only session; return its gate, with every test's requirement IDs counted.
    ``plugins`` see the same session (the docs read each collected item's fixtures)."""
    watcher = _Watcher()
    own = project_tests_dir()
    targets = ["--pyargs", "conformance", *([str(own)] if own is not None else [])]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = pytest.main(
            ["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--snapshot-warn-unused", *targets],
            [watcher, *plugins],
        )
    gate = watcher.config.stash.get(GATE_KEY, None) if watcher.config is not None else None
    errors = [r for r in watcher.failures if gate is None or r is not gate.report]
    if gate is None or errors or code not in (pytest.ExitCode.OK, pytest.ExitCode.INTERRUPTED):
        raise RuntimeError(f"collecting the tests failed (pytest exit code {int(code)}):\n{output.getvalue()[-4000:]}")
    return gate
