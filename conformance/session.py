"""The suite's per-run state and what it writes: the session's hooks (attribution, expected
failures, the report at the end), which tests are the suite's own, and the outputs (JSON report,
Markdown summary, portable JUnit names).

Apart from ``conformance.plugin`` so that each stays readable; the plugin registers the session
(one per configured run) and keeps the module-level hooks."""

from __future__ import annotations

import datetime
import functools
import json
import platform
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest
from _pytest import junitxml
from hypothesis import settings

import conformance
from conformance.harness import profiles, termination
from conformance.harness.adapter import Adapter
from conformance.products import provenance
from conformance.spec import Spec, SpecError, load_spec
from conformance.spec.releases import Verified
from conformance.spec.resources import PACKAGE, nodeid_module_path, project_tests_dir
from conformance.verdict import advisories, operations
from conformance.verdict.blame import blamed_requirements, failure_records, printable, rule_requirements
from conformance.verdict.expected_failures import ExpectedFailures
from conformance.verdict.gaps import DATA_GAP_PROPERTY, data_gap
from conformance.verdict.inert import terminal_safe
from conformance.verdict.overclaim import CLAIMED_PROPERTY, claimed_pairs, over_claims, pairs_of
from conformance.verdict.report import (
    BLAMED_PROPERTY,
    EXPECTED_ATTRIBUTE,
    FAILURE_ATTRIBUTE,
    STATUSES,
    Recorder,
    shutdown_statuses,
    verdict,
    write_json,
)
from conformance.verdict.report import requirement_ids as rule_ids
from conformance.verdict.rerun import RULES_PROPERTY, rerun_command, rerun_ids
from conformance.verdict.summary import markdown_summary

REQUIREMENT_MARKER = "requirement"
SESSION_KEY = pytest.StashKey["ConformanceSession"]()
# The package, and a checkout's own tests/: what the entry point (subagent_conformance_plugin,
# which must not import the suite to decide) calls the suite's roots, found from this side.
_ROOTS = (PACKAGE, *filter(None, [project_tests_dir()]))


def ours_path(path: Path) -> bool:
    return _ours_file(str(path))


@functools.lru_cache(maxsize=4096)
def _ours_file(path: str) -> bool:
    """Resolving costs syscalls, and every item and report of a module asks for the same file."""
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(root) for root in _ROOTS)


def ours(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the suite's own tests (the package's, or a checkout's tests/)."""
    return ours_path(Path(item.path))


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement IDs of one of our tests; a user's own `requirement` marker is theirs."""
    if not ours(item):
        return []
    return sorted({rid for mark in item.iter_markers(REQUIREMENT_MARKER) for rid in mark.args})


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
        self.error: str | None = None  # a usage error found after start-up (e.g. --requirement)
        self.leftovers: list[str] = []
        self.profile = profiles.chosen()  # the suite's Hypothesis profile, for its own tests only
        self.rules: set[str] = set()  # the requirements failures broke as rules (not as consequences)
        self.rerun: str | None = None  # the command that reruns just the violated requirements
        self.claimed: dict[str, list[tuple[str, str]]] = {}  # node id -> its claims markers (overclaim.py)
        self.over_claims: list[str] = []
        self.products: list[str] = []  # the real products the tests ran (provenance.PROPERTY values)
        self.verified: list[Verified] = []  # claimed releases verified on release day (--product-versions)
        self.restore_sigterm: Callable[[], None] = lambda: None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.is_worker and self.config.pluginmanager.getplugin("dsession") is not None:
            termination.forward_workers()  # the xdist controller: SIGTERM reaches the workers too
        xml = self.config.stash.get(junitxml.xml_key, None)  # --junitxml, on the controller only
        if xml is not None:
            _portable_junit(xml, self.config.rootpath)
            # The product versions the run tested, once for the whole suite (a testsuite property).
            xml.add_global_property("product_versions", versions_line(self.spec, self.adapter.declaration["providers"]))
            if self.verified:  # and how each release the spec does not cover was verified
                xml.add_global_property("verified_product_versions", "; ".join(v.line for v in self.verified))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, object]:
        """A conformance test may call only the operations its module declares (OPERATIONS,
        conformance/verdict/operations.py); the adapter warns of any other."""
        module = getattr(item, "module", None)
        if module is None or not module.__name__.startswith("conformance.test_"):
            return (yield)
        self.adapter.declared = operations.declaration(module)
        try:
            return (yield)
        finally:
            self.adapter.declared = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        """Our Hypothesis profile and storage around our tests' calls, and the user's own around theirs."""
        if not ours(item):
            return (yield)
        previous = settings.get_current_profile_name()
        over_exec = self.adapter.impl.startswith("exec:")
        profiles.load(self.profile, over_exec)
        found: list[dict[str, Any]] = []
        try:
            with (
                profiles.stored(),
                profiles.keyed(item),
                profiles.bounded_shrinking(over_exec),
                advisories.collecting() as found,
            ):
                return (yield)
        finally:
            settings.load_profile(previous)
            if found:  # SHOULDs found unmet: they travel with the test's reports (advisories.py)
                item.user_properties.append((advisories.ADVISORIES_PROPERTY, advisories.as_property(found)))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """The run's one attribution: what a failure is blamed on, and whether it was expected."""
        report = yield
        if not ours(item):
            return report
        report.user_properties.append((CLAIMED_PROPERTY, claimed_pairs(item)))
        gap = data_gap(call.excinfo.value) if report.failed and call.excinfo is not None else None
        if gap is not None:  # the suite's data lacks what the test needs: nothing is charged to the adapter
            report.user_properties.append((DATA_GAP_PROPERTY, gap))
            report.user_properties.append((BLAMED_PROPERTY, ""))
        elif report.failed and call.excinfo is not None:
            exc = call.excinfo.value
            exact = blamed_requirements(exc)
            blamed = list(exact) if exact is not None else requirement_ids(item)
            report.user_properties.append((BLAMED_PROPERTY, " ".join(blamed)))
            item.user_properties.append((BLAMED_PROPERTY, " ".join(blamed)))  # JUnit reads the teardown's
            setattr(
                report,
                FAILURE_ATTRIBUTE,
                json.dumps(
                    {"attribution": "exact" if exact is not None else "markers", "failures": failure_records(exc)},
                    ensure_ascii=False,
                    default=repr,
                ),
            )
            listing = self.expected
            rules = rule_requirements(exc) or blamed
            report.user_properties.append((RULES_PROPERTY, " ".join(rules)))
            entry = listing.expecting(item.nodeid, list(rules)) if listing is not None else None
            if listing is not None and entry is not None and call.when == "call":
                report.outcome = "skipped"
                report.wasxfail = f"expected failure: {entry.reason}"
                covering = {"reason": entry.reason, "link": entry.link, "entry": f"{listing.path}:{entry.line}"}
                setattr(report, EXPECTED_ATTRIBUTE, json.dumps(covering, ensure_ascii=False))
        elif report.passed and call.when == "call" and self.expected is not None:
            entry = self.expected.listed_test(item.nodeid)
            if entry is not None:
                report.outcome = "failed"
                report.longrepr = (
                    f"[XPASS(strict)] listed as an expected failure ({self.expected.path}:{entry.line}: "
                    f"{entry.reason}) but passed: remove the entry"
                )
        if report.failed:
            _make_inert(report)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The node id names the module: relative to the rootdir, or to the package's folder (see rename).
        if not self.is_worker and ours_path(nodeid_module_path(self.config.rootpath, report.nodeid.partition("::")[0])):
            self.recorder.add(report)
            if report.failed:
                self.rules.update(rule_ids(report, RULES_PROPERTY))
            for key, value in report.user_properties:
                if key == CLAIMED_PROPERTY:
                    self.claimed[report.nodeid] = pairs_of(value)
                elif key == provenance.PROPERTY:
                    self.products.append(str(value))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # An exec adapter ends with the session; a process it started that outlived it fails the run.
        # A terminated run (SIGTERM) gives it no grace: CI's kill follows soon.
        stopped = termination.finishing()
        leftovers = (self.adapter.close(0.0) if stopped else self.adapter.close()) if self.adapter.close else []
        if leftovers:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.leftovers = [str(s) for s in leftovers]
        if self.is_worker:
            return
        if self.expected is not None:
            self.stale, self.unused = self.expected.judge(list(self.recorder.tests.values()))
            if self.stale and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        exit_status = int(session.exitstatus)
        run = run_provenance(self.config, exit_status, self.error)
        if self.products:
            run["products"] = provenance.gathered(self.products)
        if self.verified:
            run["verified_versions"] = [v.line for v in self.verified]
        if self.expected is not None:
            run["stale_expected_failures"], run["unused_expected_failures"] = self.stale, self.unused
        if stopped or session.exitstatus == pytest.ExitCode.INTERRUPTED:
            run["incomplete"] = stopped or "interrupted by SIGINT (the user's Ctrl-C, say)"
        if self.adapter.exec_process is not None:
            run["stray_search"] = self.adapter.exec_process.stray_search
        report = self.recorder.report(self.spec, self.adapter.impl, self.adapter.declaration, run)
        if self.adapter.exec_process is not None:
            shutdown_statuses(report, self.adapter.exec_process.shutdown, self.leftovers)
        run["verdict"] = "usage-error" if self.error else verdict(report["summary"], exit_status)
        declaration = self.adapter.declaration or {}
        self.over_claims = over_claims(self.recorder.tests.values(), self.claimed, declaration)
        if run["verdict"] == "violated":
            self.rerun = rerun_command(str(self.config.getoption("impl")), rerun_ids(report, self.rules))
        write_outputs(self.config, report, self.rerun, self.over_claims)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.restore_sigterm()  # SIGTERM's handler, installed by the plugin's configure (termination.py)
        if self.adapter.close is not None:
            self.adapter.close()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.leftovers:
            terminalreporter.section("processes the exec adapter left running (killed; the run fails)", red=True)
            for line in self.leftovers:
                terminalreporter.line(f"  {line}")
        counts: dict[str, int] = {}
        for test in self.recorder.tests.values():
            if test["outcome"] == "not-applicable":
                counts[test["message"]] = counts.get(test["message"], 0) + 1
        if counts:
            terminalreporter.section("not applicable (unclaimed by the adapter; not counted as passed)")
            for reason, count in sorted(counts.items()):
                terminalreporter.line(f"{count:5d}  {reason}")
        unmet = {
            rid: sum(rid in advisories.advised(t) for t in self.recorder.tests.values())
            for rid in sorted({rid for t in self.recorder.tests.values() for rid in advisories.advised(t)})
        }
        if unmet:
            terminalreporter.section("SHOULD requirements not met (reported; they do not decide the verdict)")
            for rid, count in unmet.items():
                req = self.spec.requirement(rid)
                terminalreporter.line(f"  {rid} {req.title}: {count} test(s), details in the JSON report")
        if self.stale:
            terminalreporter.section("stale expected failures (they fail the run)")
            for line in self.stale:
                terminalreporter.line(line)
        if self.unused:
            terminalreporter.section("unused expected failures (no test of this run reaches them)")
            for line in self.unused:
                terminalreporter.line(line)
        if self.over_claims:
            terminalreporter.section("claims that may be wider than the harness", red=True)
            for line in self.over_claims:
                terminalreporter.line(f"  {terminal_safe(line)}")
        if self.rerun:
            terminalreporter.section("rerun just the violated requirements", red=True)
            terminalreporter.line(terminal_safe(self.rerun))


def _make_inert(report: pytest.TestReport) -> None:
    """A failure's text as the terminal shows it, with the adapter's control sequences escaped
    (an error message or stderr tail holding ESC [ 2J or an OSC 8 link is read, not obeyed)."""
    if report.longrepr is not None:
        text = str(report.longrepr)
        if terminal_safe(text) != text:
            report.longrepr = terminal_safe(text)
    report.sections = [(title, terminal_safe(content)) for title, content in report.sections]


def run_provenance(config: pytest.Config, exit_status: int, error: str | None = None) -> dict[str, Any]:
    """When and where the run happened and how it ended (report.json#/properties/run)."""
    run: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "exit_status": exit_status,
        "verdict": "usage-error" if error else "incomplete",
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "hypothesis_profile": profiles.chosen(),
        "args": [str(arg) for arg in config.invocation_params.args],
    }
    if error:
        run["error"] = error
    return run


def usage_error_report(config: pytest.Config, message: str, stopped: str | None = None) -> dict[str, Any]:
    """The report of a run that stopped before any test: the error, and no statuses; or
    (``stopped``: why) of a run a signal stopped while it started, marked incomplete."""
    try:
        spec_version = load_spec().version
    except SpecError:
        spec_version = "0.0.0"  # the spec itself did not load: the error says why
    run = run_provenance(config, int(pytest.ExitCode.USAGE_ERROR), message)
    if stopped is not None:
        run = {**run_provenance(config, int(pytest.ExitCode.INTERRUPTED)), "incomplete": f"{stopped}, before any test"}
    return {
        "suite": {"name": "subagent-conformance", "version": conformance.__version__},
        "spec_version": spec_version,
        "adapter": {"impl": str(config.getoption("impl")), "declaration": None},
        "run": run,
        "summary": dict.fromkeys(STATUSES, 0),
        "requirements": [],
        "tests": [],
    }


def write_outputs(
    config: pytest.Config, report: dict[str, Any], rerun: str | None = None, over_claims: list[str] | None = None
) -> None:
    if path := config.getoption("conformance_report"):
        write_json(Path(path), report)
    if path := config.getoption("conformance_summary"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        summary = markdown_summary(report, config.getoption("docs_url"), rerun, over_claims)
        Path(path).write_text(printable(summary), encoding="utf-8")


def versions_line(spec: Spec, providers: dict[str, str]) -> str:
    """The claimed product versions, each with its package (and the product it drives)."""
    parts = []
    for name in sorted(providers):
        area = spec.areas[name]
        if area.version is None or not area.product:
            continue
        current = area.current
        made = current.product_of(area.version) if current else None
        drives = f" (product {made})" if made else ""
        span = f", range {current.span}" if current and current.span != area.version else ""
        claimed = providers[name]
        release = area.version if claimed == area.version else f"{claimed}, tested as {area.version}"
        parts.append(f"{name} {area.product['package']}@{release}{drives}{span}")
    return ", ".join(parts) or "none"


def rename(item: pytest.Item, nodeid: str) -> None:
    """Give an item another node id: pytest 9 keeps it as a structured ``_id``, pytest 8 as ``_nodeid``."""
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId  # pytest >= 9

        item._id = NodeId.parse(nodeid)  # type: ignore[attr-defined,unused-ignore]
    else:
        setattr(item, "_nodeid", nodeid)  # noqa: B010


def _portable_junit(xml: junitxml.LogXML, root: Path) -> None:
    """JUnit names the suite's test cases by their module in the package (``conformance.test_selection``),
    wherever it is installed: pytest derives the classname from the node id, which for an installed
    suite is the module's absolute path (see rename). The node ids themselves stay as they are, to
    be pasted back; only what LogXML writes for each test case it opens changes."""
    opened = xml._opentestcase

    def opentestcase(report: pytest.TestReport | pytest.CollectReport) -> Any:
        reporter = opened(report)
        module, sep, rest = report.nodeid.partition("::")
        path = nodeid_module_path(root, module)
        if ours_path(path) and path.is_relative_to(PACKAGE.parent):
            portable = path.relative_to(PACKAGE.parent).as_posix()
            names = junitxml.mangle_test_address(portable + sep + rest)
            reporter.attrs["classname"] = ".".join(filter(None, [xml.prefix, *names[:-1]]))
            if "file" in reporter.attrs:  # junit_family=xunit1 writes the file too
                reporter.attrs["file"] = portable
        return reporter

    setattr(xml, "_opentestcase", opentestcase)  # noqa: B010
