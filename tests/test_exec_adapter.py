"""--impl=exec:COMMAND: adapters in any language, and what the suite does when one misbehaves."""

from __future__ import annotations

import json
import re
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite, SuiteRun

RunExec = Callable[..., SuiteRun]

# A minimal exec adapter around the reference implementation, with ways to misbehave.
PYTHON_ADAPTER = """
import json, os, sys, time
import reference_impl
mode = os.environ.get("SUBAGENT_ADAPTER_MISBEHAVE", "")
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "describe":
        answer = {"id": request["id"], "output": reference_impl.CONFORMANCE}
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "crash":
        sys.stderr.write("boom: the adapter fell over\\n"); sys.stderr.flush(); sys.exit(3)
    elif mode == "garbage":
        sys.stdout.write("this is not json\\n"); sys.stdout.flush(); continue
    elif mode == "wrong-id":
        answer = {"id": request["id"] + 100, "output": None}
    elif mode == "extra-key":  # a right answer in a line that exec_response does not allow
        output = getattr(reference_impl, request["op"])(request["input"])
        answer = {"id": request["id"], "output": output, "elapsed_ms": 3}
    else:
        try:
            answer = {"id": request["id"], "output": getattr(reference_impl, request["op"])(request["input"])}
        except Exception as exc:
            answer = {"id": request["id"], "error": {"message": f"{type(exc).__name__}: {exc}"}}
    sys.stdout.write(json.dumps(answer) + "\\n"); sys.stdout.flush()
"""


@pytest.fixture
def run_exec(run_suite: RunSuite) -> RunExec:
    """The suite, in a nested session, against the exec adapter COMMAND (a process of its own),
    told how to misbehave through its environment."""

    def run(command: str, *args: str, mode: str = "") -> SuiteRun:
        return run_suite("-q", *args, impl=f"exec:{command}", env={"SUBAGENT_ADAPTER_MISBEHAVE": mode})

    return run


@pytest.fixture
def python_adapter(tmp_path: Path) -> str:
    script = tmp_path / f"adapter_{uuid.uuid4().hex}.py"
    script.write_text(PYTHON_ADAPTER, encoding="utf-8")
    return f"{sys.executable} {script}"


def _failed_only(stdout: str) -> int:
    """How many tests failed, asserting that none passed (the closing line of pytest -q)."""
    closing = stdout.strip().splitlines()[-1]
    found = re.match(r"(\d+) failed(, \d+ deselected)? in ", closing)
    assert found, closing
    return int(found.group(1))


def _alive(token: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if token in cmdline:
                found.append(f"{proc.name}: {cmdline}")
    return found


@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-017", "ADP-021")
def test_an_exec_adapter_runs_the_selection_tier(run_exec: RunExec, python_adapter: str) -> None:
    done = run_exec(python_adapter, "--pyargs", "conformance.test_selection", "-k", "golden_vector")
    assert done.code == 0, done.tail
    assert _alive(python_adapter.split()[-1]) == [], "the adapter outlived the run"


@pytest.mark.requirement("ADP-018", "ADP-019", "ADP-021")
def test_a_hung_adapter_fails_its_test_within_the_timeout_and_the_run_goes_on(
    run_exec: RunExec, python_adapter: str
) -> None:
    done = run_exec(
        python_adapter, "--exec-timeout=1", "--pyargs", "conformance.test_results",
        "-k", "render_vector and upstream", mode="hang",
    )  # fmt: skip
    assert done.code == 1, done.tail
    assert "render_tool_result: no answer within 1 s (hung; killed)" in done.out
    assert _failed_only(done.out) >= 2, "every vector fails on its own, against a fresh adapter"
    assert _alive(python_adapter.split()[-1]) == []


@pytest.mark.parametrize(
    ("mode", "account"),
    [
        ("crash", "the adapter ended (exit status 3) without answering"),
        ("garbage", "malformed response line: not JSON (stdout carries only JSON lines"),
        ("wrong-id", "malformed response line"),
    ],
)
@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-019")
def test_a_crashed_or_babbling_adapter_fails_each_test_and_is_restarted(
    run_exec: RunExec, python_adapter: str, mode: str, account: str
) -> None:
    done = run_exec(
        python_adapter, "--pyargs", "conformance.test_results", "-k", "render_vector and upstream", mode=mode
    )
    assert done.code == 1, done.tail
    assert account in done.out
    if mode == "crash":
        assert "boom: the adapter fell over" in done.out, "the failure must show the adapter's stderr"
    assert _failed_only(done.out) >= 2, "every test ran against a restarted adapter"


@pytest.mark.requirement("ADP-016")
def test_validate_adapter_checks_every_response_line(run_exec: RunExec, python_adapter: str) -> None:
    """A response line with a member exec_response does not allow: tolerated by default (only
    the operation's value is checked), a failure of every call under --validate-adapter."""
    args = ("--pyargs", "conformance.test_results", "-k", "render_vector and upstream")
    lenient = run_exec(python_adapter, *args, mode="extra-key")
    assert lenient.code == 0, lenient.tail
    strict = run_exec(python_adapter, "--validate-adapter", *args, mode="extra-key")
    assert strict.code == 1, strict.tail
    assert "is not a valid exec_response (--validate-adapter)" in strict.out
    assert "elapsed_ms" in strict.out, "the failure must show the offending line"
    assert _failed_only(strict.out) >= 2


NODE_ADAPTER = fixtures_dir() / "adapters" / "node" / "adapter.mjs"


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed; .ci/run installs it")
@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-017", "ADP-020", "ADP-021")
def test_the_node_adapter_passes_the_golden_vectors(run_exec: RunExec) -> None:
    # .ci/run also runs the whole selection and results tiers against it (the properties too).
    done = run_exec(
        f"node {NODE_ADAPTER}", "--pyargs", "conformance.test_selection", "conformance.test_results", "-k", "vector"
    )
    assert done.code == 0, done.tail
    assert re.match(r"\d+ passed, \d+ deselected in ", done.out.strip().splitlines()[-1]), done.out[-500:]


# An exec adapter that implements select_output only; its describe answer is $SUBAGENT_ADAPTER_DESCRIBE.
SELECT_ONLY_ADAPTER = """
import json, os, sys
import reference_impl
declaration = json.loads(os.environ["SUBAGENT_ADAPTER_DESCRIBE"])
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "describe":
        answer = {"id": request["id"], "output": declaration}
    elif request["op"] == "select_output":
        answer = {"id": request["id"], "output": reference_impl.select_output(request["input"])}
    else:
        answer = {"id": request["id"], "error": {"message": "not implemented: " + request["op"]}}
    sys.stdout.write(json.dumps(answer) + "\\n"); sys.stdout.flush()
"""
SELECTS = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}, "process_drivers": []}


@pytest.fixture
def run_select_only(tmp_path: Path, run_suite: RunSuite) -> Callable[..., SuiteRun]:
    """The suite against SELECT_ONLY_ADAPTER describing itself as ``declaration``."""
    script = tmp_path / f"select_only_{uuid.uuid4().hex}.py"
    script.write_text(SELECT_ONLY_ADAPTER, encoding="utf-8")

    def run(declaration: dict[str, object], *args: str) -> SuiteRun:
        env = {"SUBAGENT_ADAPTER_DESCRIBE": json.dumps(declaration)}
        return run_suite("-q", *args, impl=f"exec:{sys.executable} {script}", env=env, report=True)

    return run


@pytest.mark.requirement("ADP-009", "ADP-017", "ADP-025")
def test_an_exec_adapter_listing_its_operations_runs_only_those(run_select_only: Callable[..., SuiteRun]) -> None:
    done = run_select_only(
        {**SELECTS, "operations": ["select_output"]},
        "--pyargs", "conformance.test_selection", "conformance.test_results",
    )  # fmt: skip
    assert done.code == 0, done.tail
    outcomes = {t["nodeid"]: (t["outcome"], t.get("message", "")) for t in done.report["tests"]}
    assert any(o == "passed" for o, _ in outcomes.values()), "no select_output test ran"
    results = [v for k, v in outcomes.items() if "test_results.py" in k]
    assert results and {o for o, _ in results} == {"not-applicable"}, results
    assert "not implemented" not in done.output


@pytest.mark.requirement("ADP-006", "ADP-017", "ADP-025")
def test_an_exec_adapter_is_held_to_its_operations_at_the_door(run_select_only: Callable[..., SuiteRun]) -> None:
    """A listed operation no claim requires is one usage error before the first test, as for Python."""
    done = run_select_only(
        {**SELECTS, "bindings": ["text-stream"], "operations": ["fold_output", "select_output"]},
        "--pyargs", "conformance.test_selection",
    )  # fmt: skip
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "the describe answer lists operation 'select_output' in operations, but none of its claims" in done.err
    assert " passed" not in done.out and " failed" not in done.out, done.tail


@pytest.mark.requirement("ADP-010", "ADP-013", "ADP-025")
def test_an_exec_adapter_without_an_operations_list_is_held_to_every_required_one(
    run_select_only: Callable[..., SuiteRun],
) -> None:
    """Without `operations` the describe answer claims every operation its claims require (a
    program cannot be inspected at the door): the one it lacks fails its tests as an operation error."""
    done = run_select_only(SELECTS, "--pyargs", "conformance.test_results", "-k", "settle_vector")
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert failed and all("not implemented: settle_run" in t["message"] for t in failed), failed[:2]


@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-017")
def test_an_exec_run_reports_the_exec_protocol_it_exercised(run_suite: RunSuite, python_adapter: str) -> None:
    """ADP-015..ADP-017 read passed in an exec run (every call exercised them), and are not
    applicable to a Python adapter, which does not speak the exec protocol."""
    protocol = ("ADP-015", "ADP-016", "ADP-017")
    done = run_suite("-q", "--pyargs", "conformance.test_adapter_protocol", impl=f"exec:{python_adapter}", report=True)
    assert done.code == 0, done.tail
    statuses = {r["id"]: r["status"] for r in done.report["requirements"]}
    assert [statuses[rid] for rid in protocol] == ["passed"] * 3, statuses
    python = run_suite("-q", "--pyargs", "conformance.test_adapter_protocol", impl="reference_impl", report=True)
    statuses = {r["id"]: r["status"] for r in python.report["requirements"]}
    assert [statuses[rid] for rid in protocol] == ["not-applicable"] * 3, statuses
