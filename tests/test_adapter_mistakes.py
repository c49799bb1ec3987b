"""Adapter mistakes caught at the door or named exactly: missing operations (one usage error,
with a "did you mean"), an exception from a library the adapter calls (the adapter's own frame
is kept), alternatives in a schema error, fold_output's count, and a Python call that hangs."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import reference_impl
from conformance.harness.adapter import AdapterResponseError, OperationError, OperationTimeout
from conformance.harness.declaration import AdapterUsageError, check_operations, load_adapter
from conformance.harness.repeats import RepeatedFailure
from conformance.spec import load_spec
from conformance.verdict.reach import row_params
from tests.conftest import RunSuite

CLAIMS_CODEX = """
from reference_impl import select_output, settle_run, render_tool_result, bound_diagnostic, format_diagnostic
from reference_impl import fold_output as foldOutput
CONFORMANCE = {"protocol": "1", "bindings": ["chunk-events"], "providers": {"codex": "0.147.0"}, "process_drivers": []}
"""

MISTAKES = """
import json, threading
from reference_impl import *
import reference_impl
from reference_impl.selection import AssistantOutputFold, collected_after_each

CONFORMANCE = dict(reference_impl.CONFORMANCE, providers={}, process_drivers=[])
release = threading.Event()


def bound_diagnostic(request):
    if request["text"] == "parse":
        return json.loads("{not json")  # raises inside the json library
    if request["text"] == "hang":
        release.wait()
    return reference_impl.bound_diagnostic(request)


def select_output(request):
    return ["partial one", ""]  # the texts, not content blocks


def fold_output(request):
    values = collected_after_each(AssistantOutputFold(request["binding"]), request["steps"])
    return values[-1] if len(request["steps"]) == 3 else values[-1:]  # the final value; one value
"""

Load = Callable[..., Any]


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Load]:
    """Write an adapter module beside the test and load it as --impl would."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names: list[str] = []

    def write_and_load(source: str, timeout: float | None = None) -> Any:
        name = f"adapter_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        names.append(name)
        return load_adapter(name, load_spec(), timeout)

    yield write_and_load
    for name in names:
        module = sys.modules.pop(name, None)
        if module is not None and hasattr(module, "release"):
            module.release.set()  # let an abandoned call end


@pytest.mark.requirement("ADP-006", "ADP-008", "ADP-010")
def test_every_missing_operation_is_one_usage_error_with_did_you_mean(load: Load) -> None:
    with pytest.raises(AdapterUsageError) as caught:
        load(CLAIMS_CODEX)
    message = str(caught.value)
    assert caught.value.condition == "missing-operation"
    assert "needs 2 operation(s) the adapter does not have" in message, message
    assert "  fold_output (did you mean: foldOutput?)" in message.splitlines(), message
    assert "  codex_outcome" in message.splitlines(), message


def _claiming(required_when: dict[str, Any]) -> dict[str, Any]:
    """The smallest valid declaration that makes an operation with this ``required_when`` required."""
    spec = load_spec()
    locked = {p: spec.areas[p].shipped[0] for p in ("claude-code", "codex")}  # the base versions
    declaration: dict[str, Any] = {"protocol": "1", "bindings": [], "providers": {}, "process_drivers": []}
    for claim, values in required_when.items():
        value = "chunk-events" if claim == "bindings" and values == "any" else "codex" if values == "any" else values[0]
        if claim == "settlements":  # a settlement path is claimed with a binding it takes
            declaration["bindings"] = ["chunk-events"]
            declaration["settlements"] = ["continuable" if values == "any" else values[0]]
        elif claim in ("bindings", "background"):
            declaration[claim] = [value]
        else:
            declaration["providers"][value] = locked[value]
            if claim == "process_drivers":
                declaration["process_drivers"] = [value]
        break  # one claim suffices
    return declaration


@pytest.mark.requirement("ADP-008", "ADP-010")
@pytest.mark.parametrize("row", row_params(load_spec(), "adapter-protocol", "operations"))
def test_each_operation_its_claims_require_is_checked_at_the_door(row: dict[str, Any]) -> None:
    operation = row["operation"]
    everything = {name: getattr(reference_impl, name) for name in dir(reference_impl) if not name.startswith("_")}
    lacking = type("Target", (), {k: staticmethod(v) for k, v in everything.items() if k != operation})
    declaration = _claiming(row["required_when"])
    with pytest.raises(AdapterUsageError) as caught:
        check_operations(lacking, declaration, load_spec())
    assert f"\n  {operation}" in str(caught.value) and caught.value.condition == "missing-operation", caught.value
    check_operations(type("Target", (), {k: staticmethod(v) for k, v in everything.items()}), declaration, load_spec())


@pytest.mark.requirement("ADP-006", "ADP-010")
def test_a_missing_operation_stops_the_run_before_any_test(tmp_path: Path, run_suite: RunSuite) -> None:
    (tmp_path / "claims_codex.py").write_text(CLAIMS_CODEX, encoding="utf-8")
    sys.modules.pop("claims_codex", None)
    done = run_suite("--pyargs", "conformance.test_codex", impl="claims_codex")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "codex_outcome" in done.err and "did you mean: foldOutput?" in done.err, done.tail
    assert " passed" not in done.out and " failed" not in done.out, done.tail


@pytest.mark.requirement("ADP-013")
def test_an_exception_from_a_library_keeps_the_adapters_own_frame(load: Load) -> None:
    adapter = load(MISTAKES)
    with pytest.raises(OperationError) as caught:
        adapter.call("bound_diagnostic", {"text": "parse"})
    message = str(caught.value)
    assert message.startswith("bound_diagnostic raised JSONDecodeError: "), message
    assert f"(at {adapter.home}" in message and ".py:13 in bound_diagnostic, inside " in message, message
    assert "json/decoder.py:" in message, message


@pytest.mark.requirement("ADP-012")
def test_a_schema_error_of_an_alternative_says_what_was_expected(load: Load) -> None:
    adapter = load(MISTAKES)
    events = {"binding": "chunk-events", "events": []}
    with pytest.raises(AdapterResponseError) as caught:
        adapter.call("select_output", events)
    assert "select_output returned an invalid response: expected null, or an array of content blocks: " in str(
        caught.value
    )
    assert "item 0 is a string at (the whole value)" in str(caught.value), caught.value


@pytest.mark.requirement("ADP-012")
def test_fold_output_answering_the_final_value_or_too_few_values_is_named(load: Load) -> None:
    adapter = load(MISTAKES)
    three = {"binding": "text-stream", "steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}
    with pytest.raises(AdapterResponseError) as caught:  # the final value: a list of blocks
        adapter.call("fold_output", three)
    assert "expected null, or an array of content blocks: the value is an object at [0]" in str(caught.value)
    with pytest.raises(AdapterResponseError) as caught:  # one value for two steps
        adapter.call("fold_output", {"binding": "text-stream", "steps": [{"text": "a"}, {"text": "b"}]})
    assert str(caught.value) == "fold_output must return one value per step (2 steps), got 1"


@pytest.mark.requirement("ADP-018")
@pytest.mark.reaches("adapter-protocol.exec_limits", 1)
def test_a_python_call_that_hangs_fails_at_its_deadline_and_is_not_made_again(load: Load) -> None:
    """The hung operation is refused at once from then on (another deadline would buy nothing);
    the other operations are called as before, on a fresh worker."""
    adapter = load(MISTAKES, 0.5)
    with pytest.raises(OperationTimeout) as caught:
        adapter.call("bound_diagnostic", {"text": "hang"})
    assert str(caught.value).startswith("bound_diagnostic did not return within 0.5 s (pure_call_timeout"), caught.value
    for count in (1, 2):
        with pytest.raises(RepeatedFailure) as refused:
            adapter.call("bound_diagnostic", {"text": "fine"})
        assert refused.value.requirements == ("ADP-018",), refused.value
        message = str(refused.value)
        assert message.startswith("bound_diagnostic not called: it hung earlier in this run (it did not return within")
        assert f'on input {{"text": "hang"}}; {count} call(s) of it not made so far' in message, message
    result = load_spec().table("results", "render_vectors").rows[0]["result"]
    assert adapter.call("render_tool_result", result) == reference_impl.render_tool_result(result)


@pytest.mark.requirement("ADP-018")
def test_a_hanging_python_operation_fails_its_tests_and_the_run_ends(tmp_path: Path, run_suite: RunSuite) -> None:
    (tmp_path / "hangs.py").write_text(MISTAKES.replace('request["text"] == "hang"', "True"), encoding="utf-8")
    sys.modules.pop("hangs", None)
    try:
        done = run_suite("-q", "--call-timeout=0.3", "--pyargs", "conformance.test_diagnostic", "-k", "bound_vector",
                         impl="hangs")  # fmt: skip
    finally:
        sys.modules["hangs"].release.set() if "hangs" in sys.modules else None
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert "bound_diagnostic did not return within 0.3 s" in done.out, done.tail


@pytest.mark.requirement("ADP-006", "ADP-018")
@pytest.mark.parametrize("value", ["0", "-1"])
@pytest.mark.parametrize("option", ["--call-timeout", "--exec-timeout"])
def test_a_timeout_that_is_not_positive_is_a_usage_error(run_suite: RunSuite, option: str, value: str) -> None:
    done = run_suite(f"{option}={value}", "--pyargs", "conformance.test_spec")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "a call timeout must be a positive number of seconds" in done.err, done.tail
