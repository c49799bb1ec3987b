"""Loading the adapter: bad --impl values are usage errors that say what is wrong; what an
adapter claims and lacks fails naming the operation; what it does not claim is not applicable."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.declaration import AdapterUsageError, check_declaration, load_adapter
from conformance.spec import load_spec
from conformance.verdict.reach import row_params
from tests.conftest import RunSuite, SuiteRun

DECLARATION = (
    'CONFORMANCE = {{"protocol": "{protocol}", "{key}": {bindings}, "providers": {{}}, "process_drivers": []}}\n'
)
ADAPTERS = {
    "no_declaration": "def select_output(request):\n    return None\n",
    "future_protocol": DECLARATION.format(protocol="9", key="bindings", bindings="[]"),
    "odd_binding": DECLARATION.format(protocol="1", key="bindings", bindings='["smoke-signals"]'),
    "misspelt_claim": DECLARATION.format(protocol="1", key="binding", bindings='["chunk-events"]'),
    "not_a_dict": 'CONFORMANCE = ["chunk-events"]\n',
    "newer_codex": 'CONFORMANCE = {"protocol": "1", "bindings": [], "providers": {"codex": "0.172.0"}, '
    '"process_drivers": []}\n',
    "driver_alone": 'CONFORMANCE = {"protocol": "1", "bindings": [], "providers": {}, "process_drivers": ["codex"]}\n',
    "lacks_fold": "from reference_impl import select_output\n"
    + DECLARATION.format(protocol="1", key="bindings", bindings='["chunk-events"]'),
    "malformed_answers": "from reference_impl import *\n"
    + DECLARATION.format(protocol="1", key="bindings", bindings='["chunk-events"]')
    + "def render_tool_result(result):\n    return {'isError': 'yes', 'text': 'Error: x'}\n"
    + "def bound_diagnostic(request):\n    return {'text': {request['text']}}\n",
    "one_binding": "from reference_impl import *\n"
    + DECLARATION.format(protocol="1", key="bindings", bindings='["chunk-events"]'),
}
RunPytest = Callable[..., SuiteRun]


@pytest.fixture
def adapters(tmp_path: Path) -> Iterator[Path]:
    """Every adapter of ADAPTERS written beside the nested session, importable by name, and
    imported afresh by each test (another test's copy may be cached under the same name)."""
    for name, source in ADAPTERS.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        sys.modules.pop(name, None)
    yield tmp_path
    for name in ADAPTERS:
        sys.modules.pop(name, None)


@pytest.fixture
def run_pytest(adapters: Path, run_suite: RunSuite) -> RunPytest:
    """The suite against one of ADAPTERS (by default over conformance.test_spec)."""

    def run(impl: str, *args: str) -> SuiteRun:
        return run_suite("--pyargs", *(args or ("conformance.test_spec",)), impl=impl)

    return run


@pytest.mark.requirement("ADP-001", "ADP-002", "ADP-003", "ADP-004", "ADP-005", "ADP-006")
@pytest.mark.parametrize(
    ("impl", "message"),
    [
        ("no_such_module_here", "cannot import module 'no_such_module_here'"),
        ("no_declaration", "no CONFORMANCE declaration"),
        ("no_declaration:adapter", "has no attribute 'adapter'"),
        ("future_protocol", 'protocol must be the string "1" (the adapter protocol version this suite speaks), not '),
        ("odd_binding", "unknown binding 'smoke-signals': every bindings entry must be one of chunk-events, "),
        ("misspelt_claim", "CONFORMANCE is malformed: unknown key 'binding' (did you mean 'bindings'?)"),
        ("not_a_dict", "it must be an object (a Python dict) of claims, not a list"),
        ("newer_codex", "claims provider codex at 0.172.0, but this spec covers codex 0.147.0"),
        ("driver_alone", "process driver 'codex' without its provider: every process_drivers entry must also be a key"),
        ("exec:no-such-program-here --flag", "cannot start 'no-such-program-here --flag'"),
        ("exec:", "exec: needs a command"),
        ("not a module", "expected a module path"),
    ],
)
def test_bad_impl_is_a_usage_error(adapters: Path, monkeypatch: pytest.MonkeyPatch, impl: str, message: str) -> None:
    monkeypatch.syspath_prepend(str(adapters))
    with pytest.raises(AdapterUsageError) as caught:
        load_adapter(impl, load_spec())
    assert str(caught.value).startswith(f"--impl={impl}: ") and message in str(caught.value)


@pytest.mark.requirement("ADP-006")
def test_a_usage_error_stops_the_run_with_exit_status_4(run_pytest: RunPytest) -> None:
    done = run_pytest("odd_binding")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "--impl=odd_binding: CONFORMANCE claims unknown binding 'smoke-signals'" in done.err


@pytest.mark.requirement("ADP-001", "ADP-002")
def test_the_header_names_the_adapter_and_its_claims(run_pytest: RunPytest) -> None:
    done = run_pytest("reference_impl")
    assert done.code == 0, done.tail
    assert "adapter reference_impl: {" in done.out and '"chunk-events"' in done.out


@pytest.mark.requirement("ADP-008", "ADP-010")
def test_a_claimed_but_missing_operation_stops_the_run_naming_each(run_pytest: RunPytest) -> None:
    done = run_pytest("lacks_fold", "conformance.test_selection", "-k", "golden_vector and chunk-")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "--impl=lacks_fold: CONFORMANCE claims what needs 4 operation(s)" in done.err, done.tail
    assert {"  fold_output", "  settle_run", "  render_tool_result", "  bound_diagnostic"} <= set(done.err.splitlines())


@pytest.mark.requirement("ADP-008", "ADP-009", "ADP-022")
def test_unclaimed_areas_are_not_applicable_never_passed(tmp_path: Path, run_pytest: RunPytest) -> None:
    report = tmp_path / "report.json"
    done = run_pytest(
        "one_binding", "conformance.test_selection", "-k", "golden_vector", f"--conformance-report={report}"
    )
    assert done.code == 0, done.tail
    assert "not applicable (unclaimed by the adapter; not counted as passed)" in done.out
    assert "one_binding does not claim bindings 'embedded-stream'" in done.out
    data = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {t["nodeid"].split("[")[1]: t["outcome"] for t in data["tests"]}
    assert {o for name, o in outcomes.items() if not name.startswith("chunk-")} == {"not-applicable"}
    assert {o for name, o in outcomes.items() if name.startswith("chunk-")} == {"passed"}


@pytest.mark.parametrize(
    "vector",
    row_params(
        load_spec(), "adapter-protocol", "declaration_vectors", marks=lambda v: [pytest.mark.requirement(*v["covers"])]
    ),
)
def test_declaration_vectors(vector: dict[str, Any]) -> None:
    spec = load_spec()
    if vector["usage_error"] is None:
        check_declaration(vector["declaration"], spec)
    else:
        with pytest.raises(AdapterUsageError) as caught:
            check_declaration(vector["declaration"], spec)
        assert caught.value.condition == vector["usage_error"], str(caught.value)


@pytest.mark.requirement("ADP-012")
def test_a_malformed_answer_fails_with_the_schema_error_and_the_value(run_pytest: RunPytest) -> None:
    done = run_pytest(
        "malformed_answers", "conformance.test_results", "conformance.test_diagnostic",
        "-k", "(render_vector and upstream) or bound_vector",
    )  # fmt: skip
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    invalid = "render_tool_result returned an invalid response: "
    assert invalid + "expected a boolean: the value is a string at ['isError']" in done.out
    assert 'offending value: "yes"' in done.out
    assert "bound_diagnostic returned a value that is not JSON-shaped" in done.out


SELECTS_TEXT = {"protocol": "1", "bindings": ["text-stream"], "providers": {}, "process_drivers": []}


@pytest.mark.requirement("ADP-006")
@pytest.mark.parametrize(
    ("declaration", "expected", "found"),
    [
        ({"protocol": 1}, 'protocol must be the string "1"', "not the integer 1"),
        ({"protocol": True}, 'protocol must be the string "1"', "not the boolean True"),
        ({}, 'protocol must be the string "1"', "it has none"),
        ({"protocol": "1", "bindings": ["chunk_events"]}, "must be one of chunk-events, ", "'chunk-events'?"),
        ({"protocol": "1", "bindings": [], "providers": {}}, "every declaration has the keys", "lacks the key"),
        (
            {"protocol": "1", "bindings": [], "providers": {"codex": "latest"}, "process_drivers": []},
            "must be MAJOR.MINOR.PATCH",
            'not the string "latest"',
        ),
        (
            {"protocol": "1", "bindings": [], "providers": {"codex": "0.172.0"}, "process_drivers": []},
            "0.169.0–0.169.1, 0.171.0 only",
            "upgrade-check --product codex --version 0.172.0",
        ),
        (
            {**SELECTS_TEXT, "operations": ["fold_output", "select_output"]},
            "select_output is required by bindings chunk-events or embedded-stream",
            "lists operation 'select_output'",
        ),
    ],
)  # fmt: skip
def test_a_usage_error_says_what_was_expected_and_what_it_got(declaration: Any, expected: str, found: str) -> None:
    """ADP-006: the message names what the declaration must hold, and what it holds instead."""
    with pytest.raises(AdapterUsageError) as caught:
        check_declaration(declaration, load_spec(), "--impl=x: ")
    assert expected in str(caught.value) and found in str(caught.value), str(caught.value)
