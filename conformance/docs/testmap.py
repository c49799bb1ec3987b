"""Which tests check which requirement, as the docs show it: read from the requirement markers
by one collection-only session (the coverage gate's, conformance/verdict/coverage.py), never by
running a test, so a clean checkout renders the same pages as a developer's.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import conformance
from conformance.spec import Spec, spec_digest
from conformance.spec.resources import project_tests_dir
from conformance.verdict.coverage import PROJECT, collect_whole_suite


@dataclass(frozen=True)
class TestFunction:
    """One test function and how many collected cases (parametrizations) of it name a requirement."""

    __test__ = False  # not a pytest test class

    path: str  # repository-relative file, e.g. conformance/test_codex.py
    name: str
    cases: int


class _ProcessTier:
    """Notes the collected tests that drive a product process: they use a process-tier
    operation's fixture (``run_codex``…) or claim ``process_drivers`` themselves."""

    def __init__(self, fixtures: Iterable[str]) -> None:
        self.fixtures = set(fixtures)
        self.nodes: set[str] = set()
        self._claims: dict[tuple[int, int], bool] = {}  # read once per test function, not per case: 10 s

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & self.fixtures or self._claims_driver(getattr(item, "function", None), getattr(item, "module", None)):
            self.nodes.add(item.nodeid)

    def _claims_driver(self, function: object, module: object) -> bool:
        key = (id(function), id(module))
        if key not in self._claims:
            self._claims[key] = _claims_driver(function, module)
        return self._claims[key]


_CLAIM = '"process_drivers"'


def _source(obj: object) -> str:
    try:
        return inspect.getsource(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _claims_driver(function: object, module: object) -> bool:
    """Whether the test's body claims a process driver, itself or through a helper of its module
    that it calls (``_driver(claim)``)."""
    body = _source(function)
    if _CLAIM in body:
        return True
    for name, helper in vars(module).items() if module is not None else ():
        if inspect.isfunction(helper) and f"{name}(" in body and _CLAIM in _source(helper):
            return True
    return False


@dataclass
class TestMap:
    """Every requirement's tests, grouped by function, and the tests of the process tier."""

    __test__ = False

    nodes: dict[str, list[str]] = field(default_factory=dict)  # requirement ID -> collected node ids
    process: set[str] = field(default_factory=set)  # node ids that need a process driver

    def functions(self, rid: str) -> list[TestFunction]:
        counts: dict[tuple[str, str], int] = {}
        for node in self.nodes.get(rid, ()):
            path, _, rest = node.partition("::")
            key = (path, rest.split("[", 1)[0])
            counts[key] = counts.get(key, 0) + 1
        return [TestFunction(path, name, n) for (path, name), n in sorted(counts.items())]

    def process_only(self, spec: Spec) -> list[str]:
        """Requirements an adapter without process drivers cannot reach: every conformance test
        naming them drives a product process (excluded and project-tested ones aside)."""
        found = []
        for req in spec.requirements():
            if req.excluded is not None or req.tested_by == PROJECT:
                continue
            conformance = [n for n in self.nodes.get(req.id, ()) if n.startswith("conformance/")]
            if conformance and all(n in self.process for n in conformance):
                found.append(req.id)
        return found


_COLLECTED: dict[tuple[object, ...], TestMap] = {}


def _inputs(spec: Spec) -> tuple[object, ...]:
    """What a collection depends on: the spec's contents and every file of the test folders."""
    folders = [Path(conformance.__file__).parent, *filter(None, [project_tests_dir()])]
    files = sorted(p for folder in folders for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return (spec_digest(spec.root), tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


def collect(spec: Spec) -> TestMap:
    """The whole suite's markers, from one collection-only session; collected once per process
    for the same spec and test files (the project's docs tests render several times)."""
    key = _inputs(spec)
    if key not in _COLLECTED:
        _COLLECTED.clear()
        _COLLECTED[key] = _collect(spec)
    found = _COLLECTED[key]
    return TestMap({rid: list(nodes) for rid, nodes in found.nodes.items()}, set(found.process))


def _collect(spec: Spec) -> TestMap:
    process_ops = [
        str(row["operation"]) for row in spec.table("adapter-protocol", "operations").rows if row["tier"] == "process"
    ]
    tier = _ProcessTier(process_ops)
    gate = collect_whole_suite([tier])
    return TestMap({rid: sorted(nodes) for rid, nodes in gate.tests.items()}, tier.nodes)
