"""The suite's pytest plugin: the adapter under test, Hypothesis profiles, requirement markers,
the report header and the conformance report.

It is registered by the entry point (``subagent_conformance_plugin``) only when a run asks for
the suite, and then acts on the suite's own tests only (``session.ours``): a user's tests collected in
the same run keep their markers, node ids, Hypothesis settings and reports. The fixtures
``spec``, ``adapter`` and ``claim`` live in ``conformance/conftest.py``, scoped to the package;
the per-run session and the outputs it writes in ``conformance/session.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conformance
from conformance.areas.diagnostic import snapshots
from conformance.harness import profiles, termination
from conformance.harness.declaration import AdapterUsageError, load_adapter
from conformance.session import (
    REQUIREMENT_MARKER,
    SESSION_KEY,
    ConformanceSession,
    ours,
    rename,
    requirement_ids,
    usage_error_report,
    versions_line,
    write_outputs,
)
from conformance.spec import Spec, SpecError, load_spec
from conformance.spec.releases import ProductVersionsError, load_product_versions
from conformance.spec.resources import portable_nodeid_module
from conformance.verdict.coverage import GATE_KEY, RequirementGate
from conformance.verdict.expected_failures import ExpectedFailures, load_entries
from conformance.verdict.reach import REACHES_MARKER
from conformance.verdict.report import REQUIREMENTS_PROPERTY

CLAIMS_MARKER = "claims"  # conformance/conftest.py: checked before any other reason to skip
REAL_PRODUCTS_MARKER = "real_products"
REAL_PRODUCTS_NOT_REQUESTED = "real products tier not requested: pass --real-products"
_session_key = SESSION_KEY  # the name benchmarks/suite_probe.py reads


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{REQUIREMENT_MARKER}(*ids): the spec requirement IDs a conformance test checks (e.g. SEL-001)"
    )
    config.addinivalue_line("markers", f"{REAL_PRODUCTS_MARKER}: needs the real products (runs with --real-products)")
    config.addinivalue_line(
        "markers",
        f"{CLAIMS_MARKER}(kind, value): what a test (or one parameter of it) needs the adapter to claim, "
        "checked before anything else it needs (a claim key such as settlements, or operations)",
    )
    config.addinivalue_line(
        "markers",
        "played(product, planner): a process-tier test whose call is played ahead (conformance/process/ahead.py)",
    )
    config.addinivalue_line(
        "markers", f"{REACHES_MARKER}(table, *rows): the spec table rows (area.table, row index) a test exercises"
    )
    expected: ExpectedFailures | None = None
    # Before the adapter starts: SIGTERM finishes the session.
    restore_sigterm = termination.install(worker=hasattr(config, "workerinput"))
    try:
        profiles.check(profiles.chosen())  # a bad $SUBAGENT_CONFORMANCE_PROFILE stops only the suite's runs
        spec = load_spec()
        if path := config.getoption("expected_failures"):  # before the adapter: a bad list starts nothing
            known = {req.id for req in spec.requirements()}
            expected = ExpectedFailures(load_entries(Path(path), spec.root), path, known, config.rootpath)
        verified = load_product_versions(Path(path), spec) if (path := config.getoption("product_versions")) else {}
        adapter = load_adapter(
            config.getoption("impl"),
            spec,
            config.getoption("exec_timeout"),
            config.getoption("validate_adapter"),
            verified,
        )
        providers = adapter.declaration["providers"]
        tested = [verified[p][v] for p, v in sorted(providers.items()) if v in verified.get(p, {})]
        # the contract at the claimed product versions; a release verified on release day exactly as its neighbour
        spec = spec.at(
            {p: verified[p][v].equivalent_to if v in verified.get(p, {}) else v for p, v in providers.items()}
        )
    except (SpecError, AdapterUsageError, ProductVersionsError, pytest.UsageError, profiles.ProfileError) as exc:
        message = str(exc)
        write_outputs(config, usage_error_report(config, message))  # a CI step that uploads it finds it
        restore_sigterm()
        raise pytest.UsageError(message) from None
    except termination.Terminated:  # SIGTERM while the adapter started (load_adapter killed it): say so
        write_outputs(config, usage_error_report(config, "", termination.finishing()))
        restore_sigterm()
        raise
    session = ConformanceSession(config, spec, adapter)
    session.verified = tested
    session.expected = expected
    session.restore_sigterm = restore_sigterm
    global _contract
    _contract = spec
    config.stash[_session_key] = session
    config.pluginmanager.register(session, "subagent-conformance-session")
    gate = RequirementGate(spec, requirement_ids)  # unknown IDs, and requirements no test names
    config.stash[GATE_KEY] = gate
    config.pluginmanager.register(gate, "subagent-conformance-requirement-gate")


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash[_session_key]
    current = profiles.settings_of(session.profile)
    seed = config.getoption("hypothesis_seed", default=None)
    how = "derandomized" if current.derandomize else f"seed {seed}" if seed is not None else "random seed"
    return [
        f"subagent-conformance {conformance.__version__}, spec {session.spec.version} "
        f"({sum(1 for _ in session.spec.requirements())} requirements)",
        f"adapter {session.adapter.impl}: {json.dumps(session.adapter.declaration, sort_keys=True)}",
        f"product versions tested: {versions_line(session.spec, session.adapter.declaration['providers'])}",
        *(v.line for v in session.verified),
        f"hypothesis profile {session.profile!r} (the suite's tests only): "
        f"{current.max_examples} examples per property, {how}",
    ]


@pytest.hookimpl(tryfirst=True)  # before --deselect reads the node ids
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Attach each test's requirement IDs to its reports (the requirement gate checks the IDs;
    JUnit gets the property on every test case, empty for a check of the spec itself), and give
    tests collected from outside the rootdir (``--pyargs`` of the installed suite) node ids that
    read the same on every machine and paste back into ``--deselect`` or ``--expected-failures``:
    the module relative to the folder holding the package (``conformance/test_selection.py::…``)."""
    known = {req.id for req in config.stash[_session_key].spec.requirements()}
    for item in (item for item in items if ours(item)):
        item.user_properties.append((REQUIREMENTS_PROPERTY, " ".join(requirement_ids(item))))
        file, _, rest = item.nodeid.partition("::")
        if (config.invocation_params.dir / file).resolve() != item.path.resolve():
            rename(item, f"{portable_nodeid_module(item.path) or item.path}::{rest}")
    wanted = {rid.strip() for option in config.getoption("requirement") for rid in option.split(",") if rid.strip()}
    if wanted:
        strangers = sorted(wanted - known)
        if strangers:
            message = f"--requirement names IDs the spec does not define: {', '.join(strangers)}"
            config.stash[_session_key].error = message
            raise pytest.UsageError(message)
        keep = [item for item in items if wanted & set(requirement_ids(item))]
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the run's tests are known: guard the shipped snapshots if any of the suite's run."""
    snapshots.guard(session.config, session.config.stash[_session_key].spec, session.items, ours)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The real-products tier is opt-in: without --real-products its tests are reported as skipped."""
    if item.get_closest_marker(REAL_PRODUCTS_MARKER) and not item.config.getoption("real_products"):
        pytest.skip(REAL_PRODUCTS_NOT_REQUESTED)


_contract: Spec | None = None  # the configured run's spec, for what its test modules read at import


def contract() -> Spec:
    """The contract the run tests: the spec at the adapter's claimed product versions (the
    loaded spec, at the base versions, outside a configured run). Test modules read it at
    import, so that their parameters are the claimed version's rows."""
    return _contract if _contract is not None else load_spec()


def session_of(config: pytest.Config) -> ConformanceSession:
    """The run's session; the suite's tests collected in a run that did not ask for it have none."""
    session = config.stash.get(_session_key, None)
    if session is None:
        raise pytest.UsageError(
            "the suite's tests were collected, but subagent-conformance was not activated for this run "
            "(is its plugin disabled with -p no:subagent_conformance?)"
        )
    return session
