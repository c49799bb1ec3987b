"""Claims that fit real harnesses (ADP-025, ADP-026) and honest statuses (ADP-009): an adapter
that implements one operation, or lacks a settle_run path, says so; the suite never calls what
it does not claim, and a requirement is `passed` only from a test whose checks reached the
adapter on a surface it claims.

The adapters here log every call with the test that made it (``PYTEST_CURRENT_TEST``), so that
what the report calls passed is held to what the adapter was actually asked."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.claims import Claims
from conformance.spec import load_spec
from tests.conftest import RunSuite, SuiteRun

# Every operation the selection and results tiers can call, defined (as the reference's, logged)
# whatever the declaration claims: the suite must call only those the adapter implements.
LOGGED_ADAPTER = """
import json, os
import reference_impl

CONFORMANCE = {declaration}
LOG = os.environ["SUBAGENT_CLAIMS_LOG"]


def _logged(name):
    def operation(request):
        path = (request.get("shape"), request.get("driver")) if name == "settle_run" else None
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps([name, os.environ.get("PYTEST_CURRENT_TEST", ""), path]) + "\\n")
        {refusal}
        return getattr(reference_impl, name)(request)

    return operation


for _name in ("select_output", "fold_output", "settle_run", "render_tool_result", "bound_diagnostic"):
    globals()[_name] = _logged(_name)
"""
NO_ONE_SHOT = (
    'if path == ("one-shot", "in-process"):\n'
    '            raise NotImplementedError("this harness has no in-process one-shot driver")'
)
TIERS = (
    "conformance.test_selection",
    "conformance.test_results",
    "conformance.test_adapter_protocol",
    "conformance.test_diagnostic",
    "conformance.test_diagnostic_bound",
)
SELECT_ONLY = {
    "protocol": "1",
    "bindings": ["chunk-events"],
    "providers": {},
    "process_drivers": [],
    "operations": ["select_output"],
}
NO_IN_PROCESS_ONE_SHOT = {
    "protocol": "1",
    "bindings": ["chunk-events", "embedded-stream", "text-stream"],
    "providers": {},
    "process_drivers": [],
    "settlements": ["continuable", "out-of-process"],
}

Call = tuple[str, str, Any]


def _test_name(nodeid: str) -> str:
    """``test_x[param]`` of a node id or of PYTEST_CURRENT_TEST (``path::test_x[param] (call)``)."""
    return nodeid.split("::", 1)[-1].rsplit(" (", 1)[0]


@pytest.fixture
def logged(tmp_path: Path, run_suite: RunSuite) -> Iterator[Any]:
    """Run TIERS against a logged adapter with ``declaration``; give the run and its calls."""
    names: list[str] = []

    def run(declaration: dict[str, Any], refusal: str = "") -> tuple[SuiteRun, list[Call]]:
        name = f"logged_{len(names)}"
        names.append(name)
        source = LOGGED_ADAPTER.format(declaration=repr(declaration), refusal=refusal or "pass")
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        log = tmp_path / f"{name}.log"
        log.touch()
        done = run_suite("--pyargs", *TIERS, impl=name, report=True, env={"SUBAGENT_CLAIMS_LOG": str(log)})
        calls = [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]
        return done, calls

    yield run
    for name in names:
        sys.modules.pop(name, None)


def _statuses(done: SuiteRun) -> dict[str, str]:
    return {r["id"]: r["status"] for r in done.report["requirements"]}


def _passes_come_from_calls(done: SuiteRun, calls: list[Call]) -> None:
    """Every passed test asked the adapter something, and every passed requirement has such a test."""
    calling = {_test_name(test) for _, test, _ in calls}
    passed = [t for t in done.report["tests"] if t["outcome"] == "passed"]
    idle = [t["nodeid"] for t in passed if _test_name(t["nodeid"]) not in calling]
    assert idle == [], f"tests passed without a call to what the adapter claims: {idle[:5]}"
    for requirement in done.report["requirements"]:
        if requirement["status"] == "passed":
            assert any(_test_name(t) in calling for t in requirement["tests"]), requirement


@pytest.mark.requirement("ADP-009", "ADP-022", "ADP-025")
def test_an_adapter_claiming_only_select_output_runs_green_and_nothing_else_passes(logged: Any) -> None:
    done, calls = logged(SELECT_ONLY)
    assert done.code == 0 and not done.violated(), done.tail
    assert {op for op, _, _ in calls} == {"select_output"}, "the suite called an operation the adapter does not list"
    _passes_come_from_calls(done, calls)
    statuses = _statuses(done)
    spec = load_spec()
    # results and diagnostic requirements need settle_run, render_tool_result or bound_diagnostic
    for area in ("results", "diagnostic"):
        for requirement in spec.areas[area].requirements:
            assert statuses[requirement.id] != "passed", (requirement.id, statuses[requirement.id])
    unimplemented = [
        t for t in done.report["tests"] if t["outcome"] == "not-applicable" and "does not implement" in t["message"]
    ]
    assert unimplemented, "no test needed an operation the adapter does not implement"
    for requirement in done.report["requirements"]:
        tests = {t["nodeid"] for t in unimplemented}
        if requirement["tests"] and set(requirement["tests"]) <= tests:
            assert requirement["status"] == "not-applicable", requirement


@pytest.mark.requirement("ADP-009", "ADP-013", "ADP-026")
def test_an_adapter_without_the_in_process_one_shot_path_gets_no_operation_error(logged: Any) -> None:
    done, calls = logged(NO_IN_PROCESS_ONE_SHOT, NO_ONE_SHOT)
    assert done.code == 0 and not done.violated(), done.tail
    assert "ADP-013" not in done.output
    settled = [path for op, _, path in calls if op == "settle_run"]
    assert settled and ["one-shot", "in-process"] not in settled, "an in-process one-shot run was sent"
    assert {tuple(p) for p in settled} == {("continuable", "in-process"), ("one-shot", "out-of-process")}
    _passes_come_from_calls(done, calls)
    statuses = _statuses(done)
    in_process_only = load_spec().table("results", "one_shot_stop_reasons").requirements
    assert in_process_only and all(statuses[rid] == "not-applicable" for rid in in_process_only), {
        rid: statuses[rid] for rid in in_process_only
    }


def test_claims_follow_the_settlements_table() -> None:
    """A path is claimed with a binding it takes (table settlements), and bound_diagnostic follows
    the out-of-process path, the one whose result can carry a diagnostic."""
    spec = load_spec()
    base = {"protocol": "1", "providers": {}, "process_drivers": []}
    text = Claims.of({**base, "bindings": ["text-stream"]}, spec)
    assert text.values["settlements"] == ["out-of-process"] and text.claims("operations", "bound_diagnostic")
    continuable = Claims.of({**base, "bindings": ["chunk-events"], "settlements": ["continuable"]}, spec)
    assert continuable.values["settlements"] == ["continuable"]
    assert continuable.claims("operations", "settle_run") and not continuable.claims("operations", "bound_diagnostic")
    assert continuable.unclaimed("settle_run", {"shape": "one-shot", "driver": "out-of-process"}) == (
        "does not claim settlements 'out-of-process'"
    )
    everything = Claims.of({**base, "bindings": ["chunk-events"]}, spec)
    assert everything.values["settlements"] == ["in-process-one-shot", "continuable", "out-of-process"]


def test_the_settlements_table_names_the_branches_of_the_settle_run_input() -> None:
    """Table adapter-protocol.settlements restates operations.json's settle_run_input branches:
    each row's shape, driver and bindings are one branch's, and every branch has its row."""
    spec = load_spec()
    schema = json.loads((spec.root / "schema" / "operations.json").read_text(encoding="utf-8"))
    every = [str(b) for b in spec.vocabulary("selection.binding").values]
    branches = set()
    for branch in schema["$defs"]["settle_run_input"]["oneOf"]:
        properties = branch["properties"]
        bindings = properties.get("binding", {}).get("enum", every)
        branches.add((properties["shape"]["const"], properties["driver"]["const"], tuple(bindings)))
    rows = {(r["shape"], r["driver"], tuple(r["bindings"])) for r in spec.table("adapter-protocol", "settlements").rows}
    assert rows == branches


NO_PROVIDER = """
import reference_impl
from reference_impl import *
CONFORMANCE = {**reference_impl.CONFORMANCE, "providers": {}, "process_drivers": []}
"""


@pytest.mark.requirement("ADP-009", "ADP-022")
@pytest.mark.parametrize("claims_providers", [False, True], ids=["unclaimed", "claimed"])
def test_an_opt_in_tier_that_is_off_is_not_applicable_to_what_is_not_claimed(
    tmp_path: Path, run_suite: RunSuite, claims_providers: bool
) -> None:
    """One rule: what the adapter does not claim is not applicable, whatever else would stop its
    tests (the real-products tier is off here); what it claims but cannot be tested here is
    not-testable. Before, the tier's skip came first and unclaimed providers read not-testable."""
    (tmp_path / "no_provider.py").write_text(NO_PROVIDER, encoding="utf-8")
    sys.modules.pop("no_provider", None)
    impl = "reference_impl" if claims_providers else "no_provider"
    done = run_suite("--pyargs", "conformance.test_real_products", impl=impl, report=True)
    sys.modules.pop("no_provider", None)
    assert done.code == 0, done.tail
    reached = [r for r in done.report["requirements"] if r["tests"]]
    assert reached, "the tier reached no requirement"
    wanted = "not-testable" if claims_providers else "not-applicable"
    assert {r["status"] for r in reached} == {wanted}, {r["id"]: r["status"] for r in reached}
