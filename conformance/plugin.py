"""The pytest plugin (entry point ``pytest11``): the adapter under test, Hypothesis profiles,
requirement markers, the report header and the conformance report."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator
from pathlib import Path

import pytest
from hypothesis import settings

import conformance
from conformance.adapter import Adapter, AdapterUsageError, load_adapter
from conformance.blame import blamed_requirements, failure_records
from conformance.coverage import GATE_KEY, RequirementGate
from conformance.expected_failures import ExpectedFailures, load_entries
from conformance.profiles import register_profiles
from conformance.reach import REACHES_MARKER
from conformance.report import (
    BLAMED_PROPERTY,
    FAILURE_ATTRIBUTE,
    NOT_APPLICABLE,
    REQUIREMENTS_PROPERTY,
    Recorder,
    markdown_summary,
    write_json,
)
from conformance.spec import Spec, SpecError, load_spec

register_profiles()
settings.load_profile(os.environ.get("SUBAGENT_CONFORMANCE_PROFILE", "ci" if os.environ.get("CI") else "default"))

REQUIREMENT_MARKER = "requirement"
REAL_PRODUCTS_MARKER = "real_products"
REAL_PRODUCTS_NOT_REQUESTED = "real products tier not requested: pass --real-products"
_session_key = pytest.StashKey["ConformanceSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("subagent-conformance")
    group.addoption(
        "--impl",
        default="reference_impl",
        metavar="MODULE",
        help="the implementation under test: pkg.mod or pkg.mod:attr with a CONFORMANCE declaration "
        "(default: %(default)s, the bundled reference implementation)",
    )
    group.addoption(
        "--exec-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --impl=exec:…, how long a pure operation may take before the adapter counts as hung "
        "(default: pure_call_timeout of the spec's exec_limits)",
    )
    group.addoption(
        "--validate-adapter",
        action="store_true",
        help="with --impl=exec:…, also validate every protocol line in both directions against "
        "exec_request / exec_response of spec/schema/operations.json (operation values are always validated)",
    )
    group.addoption(
        "--requirement",
        action="append",
        default=[],
        metavar="IDS",
        help="run only the tests that check these requirement IDs (comma-separated; repeatable)",
    )
    group.addoption(
        "--expected-failures",
        default=None,
        metavar="FILE",
        help="YAML/JSON list of known failures (requirement or test, reason, link); "
        "listed failures are expected, a listed pass or an entry naming nothing fails the run",
    )
    group.addoption(
        "--conformance-report",
        default=None,
        metavar="PATH",
        help="write a JSON report: every requirement's status and every test's outcome",
    )
    group.addoption(
        "--real-products",
        action="store_true",
        default=False,
        help="also run the real-products tier: the installed Codex app-server and Claude Code CLI against fake "
        "model services on 127.0.0.1 (install them first: subagent-conformance products install)",
    )
    group.addoption(
        "--conformance-summary",
        default=None,
        metavar="PATH",
        help="write a Markdown summary of the run, fit for a CI step summary",
    )


class ConformanceSession:
    """Per-run state: the loaded spec and adapter, and the outcomes as they arrive."""

    def __init__(self, config: pytest.Config, spec: Spec, adapter: Adapter) -> None:
        self.config = config
        self.spec = spec
        self.adapter = adapter
        self.recorder = Recorder()
        self.is_worker = hasattr(config, "workerinput")
        self.expected: ExpectedFailures | None = None
        self.stale: list[str] = []
        self.unused: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """The run's one attribution: what a failure is blamed on, and whether it was expected."""
        report = yield
        if report.failed and call.excinfo is not None:
            exc = call.excinfo.value
            exact = blamed_requirements(exc)
            blamed = list(exact) if exact is not None else _ids(item)
            report.user_properties.append((BLAMED_PROPERTY, " ".join(blamed)))
            setattr(
                report,
                FAILURE_ATTRIBUTE,
                json.dumps(
                    {"attribution": "exact" if exact is not None else "markers", "failures": failure_records(exc)},
                    ensure_ascii=False,
                    default=repr,
                ),
            )
            entry = self.expected.expecting(item.nodeid, blamed) if self.expected is not None else None
            if entry is not None and call.when == "call":
                report.outcome = "skipped"
                report.wasxfail = f"expected failure: {entry.reason}"
        elif report.passed and call.when == "call" and self.expected is not None:
            entry = self.expected.listed_test(item.nodeid)
            if entry is not None:
                report.outcome = "failed"
                report.longrepr = (
                    f"[XPASS(strict)] listed as an expected failure ({self.expected.path}:{entry.line}: "
                    f"{entry.reason}) but passed: remove the entry"
                )
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.is_worker:
            self.recorder.add(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.is_worker:
            return
        if self.expected is not None:
            self.stale, self.unused = self.expected.judge(list(self.recorder.tests.values()))
            if self.stale and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        report = self.recorder.report(self.spec, self.adapter.impl, self.adapter.declaration)
        if path := self.config.getoption("conformance_report"):
            write_json(Path(path), report)
        if path := self.config.getoption("conformance_summary"):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(markdown_summary(report), encoding="utf-8")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.adapter.close is not None:
            self.adapter.close()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        counts: dict[str, int] = {}
        for test in self.recorder.tests.values():
            if test["outcome"] == "not-applicable":
                counts[test["message"]] = counts.get(test["message"], 0) + 1
        if counts:
            terminalreporter.section("not applicable (unclaimed by the adapter; not counted as passed)")
            for reason, count in sorted(counts.items()):
                terminalreporter.line(f"{count:5d}  {reason}")
        if self.stale:
            terminalreporter.section("stale expected failures (they fail the run)")
            for line in self.stale:
                terminalreporter.line(line)
        if self.unused:
            terminalreporter.section("unused expected failures (no test of this run reaches them)")
            for line in self.unused:
                terminalreporter.line(line)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{REQUIREMENT_MARKER}(*ids): the spec requirement IDs a conformance test checks (e.g. SEL-001)"
    )
    config.addinivalue_line("markers", f"{REAL_PRODUCTS_MARKER}: needs the real products (runs with --real-products)")
    config.addinivalue_line(
        "markers", f"{REACHES_MARKER}(table, *rows): the spec table rows (area.table, row index) a test exercises"
    )
    expected: ExpectedFailures | None = None
    try:
        spec = load_spec()
        if path := config.getoption("expected_failures"):  # before the adapter: a bad list starts nothing
            known = {req.id for req in spec.requirements()}
            expected = ExpectedFailures(load_entries(Path(path), spec.root), path, known)
        adapter = load_adapter(
            config.getoption("impl"), spec, config.getoption("exec_timeout"), config.getoption("validate_adapter")
        )
    except (SpecError, AdapterUsageError) as exc:
        raise pytest.UsageError(str(exc)) from None
    session = ConformanceSession(config, spec, adapter)
    session.expected = expected
    config.stash[_session_key] = session
    config.pluginmanager.register(session, "subagent-conformance-session")
    gate = RequirementGate(spec, _ids)  # unknown IDs, and requirements no test names
    config.stash[GATE_KEY] = gate
    config.pluginmanager.register(gate, "subagent-conformance-requirement-gate")


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash[_session_key]
    current = settings()
    seed = config.getoption("hypothesis_seed", default=None)
    how = "derandomized" if current.derandomize else f"seed {seed}" if seed is not None else "random seed"
    return [
        f"subagent-conformance {conformance.__version__}, spec {session.spec.version} "
        f"({sum(1 for _ in session.spec.requirements())} requirements)",
        f"adapter {session.adapter.impl}: {json.dumps(session.adapter.declaration, sort_keys=True)}",
        f"hypothesis profile {settings.get_current_profile_name()!r}: "
        f"{current.max_examples} examples per property, {how}",
    ]


def _ids(item: pytest.Item) -> list[str]:
    return sorted({rid for mark in item.iter_markers(REQUIREMENT_MARKER) for rid in mark.args})


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Attach each test's requirement IDs to its reports (the requirement gate checks the IDs)."""
    known = {req.id for req in config.stash[_session_key].spec.requirements()}
    for item in items:
        ids = _ids(item)
        if ids:
            item.user_properties.append((REQUIREMENTS_PROPERTY, " ".join(ids)))
    wanted = {rid.strip() for option in config.getoption("requirement") for rid in option.split(",") if rid.strip()}
    if wanted:
        strangers = sorted(wanted - known)
        if strangers:
            raise pytest.UsageError(f"--requirement names IDs the spec does not define: {', '.join(strangers)}")
        keep = [item for item in items if wanted & set(_ids(item))]
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The real-products tier is opt-in: without --real-products its tests are reported as skipped."""
    if item.get_closest_marker(REAL_PRODUCTS_MARKER) and not item.config.getoption("real_products"):
        pytest.skip(REAL_PRODUCTS_NOT_REQUESTED)


@pytest.fixture(scope="session")
def spec(pytestconfig: pytest.Config) -> Spec:
    """The loaded contract."""
    return pytestconfig.stash[_session_key].spec


@pytest.fixture(scope="session")
def adapter(pytestconfig: pytest.Config) -> Adapter:
    """The implementation under test, as --impl names it."""
    return pytestconfig.stash[_session_key].adapter


@pytest.fixture(scope="session")
def claim(adapter: Adapter) -> Callable[[str, str], None]:
    """``claim("bindings", "chunk-events")``: go on only if the adapter claims it; else not applicable."""

    def need(kind: str, value: str) -> None:
        if not adapter.claims(kind, value):
            pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} does not claim {kind} {value!r}")

    return need
