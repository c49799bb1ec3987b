"""Exec adapter faults, each named exactly: processes that leave the adapter's group, a huge or
wrong response line, a duplicate answer, a crash while a child holds stdout, half a line then an exit,
a closed stdout (failed at once, not at the deadline), a start-up banner on stdout, a command
that cannot be split and a timeout that is not positive."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import RunSuite, SuiteRun

ADAPTER = """
import json, os, subprocess, sys
import reference_impl
mode = os.environ["SUBAGENT_ADAPTER_FAULT"]
sleeper = [sys.executable, "-c", "import time; time.sleep(300)", os.environ.get("SUBAGENT_ADAPTER_MARKER", "")]
if mode == "banner":
    print("my-adapter 1.0 ready")  # a banner on stdout, where only JSON lines belong
    sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    rid, op = request["id"], request["op"]
    if op == "describe":
        if mode == "setsid":  # a grandchild in a session of its own: the group kill misses it
            subprocess.Popen(sleeper, start_new_session=True, stdout=subprocess.DEVNULL)
        answer = {"id": rid, "output": reference_impl.CONFORMANCE}
    elif mode == "crash-held":  # a child keeps stdout open while the adapter dies
        subprocess.Popen(sleeper)
        sys.stderr.write("fell over\\n"); sys.stderr.flush()
        os._exit(3)
    elif mode == "huge":
        answer = {"id": rid, "output": {"isError": True, "text": "x" * (9 * 1024 * 1024)}}
    elif mode == "wrong-shape":
        answer = {"id": rid, "output": {"isError": "yes", "text": "y" * 100000}}
    elif mode == "wrong-id":
        answer = {"id": rid + 100, "output": None}
    else:
        answer = {"id": rid, "output": getattr(reference_impl, op)(request["input"])}
    # "twice": both lines in one write, so that the second comes with the answer whatever the
    # scheduler does; two writes (as $PYTHONUNBUFFERED makes of two print calls) let a busy
    # machine run the suite between them, and the second line then comes after the answer.
    times = 2 if mode == "twice" and op != "describe" else 1
    sys.stdout.write((json.dumps(answer) + "\\n") * times)
    sys.stdout.flush()
if mode == "deaf":  # end of input is not the end of this one
    import time
    time.sleep(300)
"""
RENDER = ("--pyargs", "conformance.test_results", "-k", "render_vector and upstream")
RunFault = Callable[..., SuiteRun]


@pytest.fixture
def marker() -> str:
    """A word that names the processes of one test, to find them in /proc."""
    return f"marker-{uuid.uuid4().hex}"


@pytest.fixture
def run_fault(tmp_path: Path, run_suite: RunSuite, marker: str) -> RunFault:
    script = tmp_path / "faulty_adapter.py"
    script.write_text(ADAPTER, encoding="utf-8")

    def run(fault: str, *args: str) -> SuiteRun:
        env = {"SUBAGENT_ADAPTER_FAULT": fault, "SUBAGENT_ADAPTER_MARKER": marker}
        return run_suite("-q", *args, impl=f"exec:{sys.executable} {script}", env=env)

    return run


def _alive(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(proc.name)
    return found


def _longest_line(done: SuiteRun) -> int:
    return max(len(line) for line in done.output.splitlines())


@pytest.mark.requirement("ADP-021")
def test_a_process_that_left_the_adapters_group_fails_the_run_and_is_killed(run_fault: RunFault, marker: str) -> None:
    done = run_fault("setsid", *RENDER)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert "processes the exec adapter left running (killed; the run fails)" in done.out, done.tail
    assert f"time.sleep(300) {marker}" in done.out, done.tail
    assert _alive(marker) == []


@pytest.mark.requirement("ADP-019")
def test_a_crash_is_reported_by_its_exit_status_while_a_child_holds_stdout(run_fault: RunFault, marker: str) -> None:
    done = run_fault("crash-held", "--exec-timeout=8", *RENDER)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert "render_tool_result: the adapter ended (exit status 3) without answering" in done.out, done.tail
    assert "no answer within" not in done.out and "fell over" in done.out, done.tail
    assert _alive(marker) == []


@pytest.mark.requirement("ADP-015", "ADP-016", "ADP-019")
@pytest.mark.reaches("adapter-protocol.exec_limits", 5, 6)
def test_a_line_beyond_response_line_max_is_refused_unread_and_shown_short(run_fault: RunFault) -> None:
    done = run_fault("huge", *RENDER)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert "response line refused: longer than response_line_max (8388608 bytes)" in done.out, done.tail
    assert _longest_line(done) < 2000, "the offending line must be shown cut to shown_value_max"


@pytest.mark.requirement("ADP-012")
@pytest.mark.reaches("adapter-protocol.exec_limits", 6)
def test_an_offending_value_is_shown_cut_to_shown_value_max(run_fault: RunFault) -> None:
    done = run_fault("wrong-shape", *RENDER)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert "expected a boolean: the value is a string at ['isError']; offending value: \"yes" in done.out, done.tail
    assert _longest_line(done) < 2000, "a 100 000-character value must not be printed whole"


@pytest.mark.requirement("ADP-016")
@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("wrong-id", "malformed response line: wrong id (not the request's); adapter command"),
        ("twice", "malformed response: the request was answered twice (two lines carry its id)"),
    ],
)  # fmt: skip
def test_a_refused_response_line_says_why(run_fault: RunFault, fault: str, reason: str) -> None:
    """The first line says why in words alike for every call (the repeat short-cut compares it);
    the line and its ids follow."""
    done = run_fault(fault, *RENDER)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    assert f"render_tool_result: {reason}" in done.out, done.tail
    details = {"wrong-id": ['the line: \'{"id": 102, "output": null}\'', "wrong id 102, expected 2"]}
    assert all(detail in done.out for detail in details.get(fault, ["the request's id: 2"])), done.tail


@pytest.mark.requirement("ADP-016")
def test_a_duplicate_answer_fails_the_call_answered_twice_and_not_the_next(tmp_path: Path, run_suite: RunSuite) -> None:
    """Only the first render_tool_result is answered twice: its test fails, every later one passes."""
    impl = f"exec:{sys.executable} {FAULTS / 'fault_exec_lines.py'}"
    done = run_suite(
        "-q",
        *RENDER,
        impl=impl,
        env={"FAULT_EXEC_LINES": "twice-once", "FAULT_STATE": str(tmp_path / "once")},
        report=True,
    )
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert [t["blamed"] for t in failed] == [["ADP-016"]], done.tail
    ran = [t for t in done.report["tests"] if t["outcome"] in ("passed", "failed")]
    assert len(ran) >= 2 and sum(t["outcome"] == "passed" for t in ran) == len(ran) - 1, done.tail
    assert "the request was answered twice" in failed[0]["message"], failed[0]


@pytest.mark.requirement("ADP-015", "ADP-017")
def test_a_banner_on_stdout_is_told_that_stdout_carries_only_json_lines(run_fault: RunFault) -> None:
    done = run_fault("banner", *RENDER)
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "malformed response line: not JSON (stdout carries only JSON lines" in done.err, done.tail
    assert "the line: 'my-adapter 1.0 ready'" in done.err
    assert "write logs and banners to stderr" in done.err and "restarting" not in done.err, done.tail


@pytest.mark.requirement("ADP-001", "ADP-006")
def test_a_command_that_cannot_be_split_is_a_malformed_impl_usage_error(run_suite: RunSuite) -> None:
    done = run_suite("--pyargs", "conformance.test_spec", impl="exec:python 'adapter.py")
    assert done.code == pytest.ExitCode.USAGE_ERROR, done.tail
    assert "--impl=exec:python 'adapter.py: cannot split \"python 'adapter.py\" into words by shell rules" in done.err
    assert "No closing quotation" in done.err and "INTERNALERROR" not in done.output, done.tail


HANGS_ON = """
import json, os, sys, time
import reference_impl
hanging = os.environ["HANGING"].split(",")
for line in sys.stdin:
    request = json.loads(line)
    rid, op = request["id"], request["op"]
    with open(os.environ["ENTERED"], "a") as entered:
        entered.write(op + "\\n")
    if op in hanging:
        time.sleep(3600)
    output = reference_impl.CONFORMANCE if op == "describe" else getattr(reference_impl, op)(request["input"])
    sys.stdout.write(json.dumps({"id": rid, "output": output}) + "\\n")
    sys.stdout.flush()
"""


@pytest.mark.requirement("ADP-018", "ADP-019")
def test_a_restarted_adapter_that_hangs_again_costs_one_deadline_per_operation(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    """Every operation the selection tests call hangs, in the first adapter process and in the
    restarted one: each is sent once, and every later call of it fails at once, counted, on ADP-018
    (Hypothesis shrinks in the ``ci`` profile: it must not shrink over deadlines)."""
    script, entered = tmp_path / "hanging_adapter.py", tmp_path / "entered"
    script.write_text(HANGS_ON, encoding="utf-8")
    env = {"HANGING": "fold_output,select_output", "ENTERED": str(entered), "SUBAGENT_CONFORMANCE_PROFILE": "ci"}
    done = run_suite("-q", "--exec-timeout=0.3", "--pyargs", "conformance.test_selection",
                     impl=f"exec:{sys.executable} {script}", env=env, report=True)  # fmt: skip
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    sent = entered.read_text(encoding="utf-8").splitlines()
    assert sorted(op for op in sent if op != "describe") == ["fold_output", "select_output"], sent
    assert sent.count("describe") <= 3, sent  # the first process and the restarts after each hang, no more
    failed = done.failed()
    assert len(failed) > 10 and {tuple(t["blamed"]) for t in failed} == {("ADP-018",)}, done.tail
    refused = [t for t in failed if " not called: it hung earlier in this run (no answer within 0.3 s)" in t["message"]]
    assert len(refused) >= len(failed) - 2, done.tail  # all but the tests where each operation hung


FAULTS = Path(__file__).resolve().parents[1] / "fixtures" / "faults"


def _stdout_ends(run_suite: RunSuite, fault: str, *args: str) -> SuiteRun:
    impl = f"exec:{sys.executable} {FAULTS / 'fault_stdout_ends.py'}"
    return run_suite("-q", *args, *RENDER, impl=impl, env={"FAULT_STDOUT_ENDS": fault}, report=True)


@pytest.mark.requirement("ADP-015", "ADP-019")
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("half-line", "the adapter wrote half a line (no newline), closed its stdout and ended (exit status 7): "
                      "not JSON"),
        ("half-line-held", "the adapter ended (exit status 7) without answering, after half a line (no newline)"),
    ],
)  # fmt: skip
def test_half_a_line_then_an_exit_is_named_by_the_exit_status(run_suite: RunSuite, fault: str, said: str) -> None:
    """Whether stdout closes with the exit or a child holds it open, the exit status is named."""
    done = _stdout_ends(run_suite, fault)
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert failed and all(t["blamed"] == ["ADP-019", "ADP-015"] for t in failed), [t["blamed"] for t in failed]
    assert f"render_tool_result: {said}" in failed[0]["message"], failed[0]
    assert '\'{"id": 2, "output": {"isErr\'' in done.out, "the half line is shown, below the first line"
    assert f"about to end stdout: {fault}" in done.out, "the failure shows the adapter's stderr"


@pytest.mark.requirement("ADP-018", "ADP-019")
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("closed-live", "the adapter closed its stdout without answering and was still running 0.5 s later (killed)"),
        ("closed-exit", "the adapter ended (exit status 5) without answering; its stdout closed"),
    ],
)
def test_a_closed_stdout_fails_the_call_at_once_not_at_its_deadline(run_suite: RunSuite, fault: str, said: str) -> None:
    """With a 120 s deadline every call fails as soon as stdout closes (and the adapter's exit is
    reaped, within exit_reap): by the deadline, one call alone would take the whole run's time. An
    adapter that lives on with its stdout closed can never answer: like a hung one, its operation
    is not called again (one exit_reap in the run, not one per call), and still blamed."""
    started = time.monotonic()
    done = _stdout_ends(run_suite, fault, "--exec-timeout=120")
    took = time.monotonic() - started
    assert done.code == pytest.ExitCode.TESTS_FAILED, done.tail
    failed = done.failed()
    assert len(failed) >= 2 and all(t["blamed"] == ["ADP-019"] for t in failed), [t["blamed"] for t in failed]
    messages = [t["message"] for t in failed]
    assert sum(f"render_tool_result: {said}" in m for m in messages) == (1 if fault == "closed-live" else len(failed))
    if fault == "closed-live":
        refused = "render_tool_result not called: it closed its stdout and kept running earlier in this run"
        assert sum(refused in m for m in messages) == len(failed) - 1, messages
    assert "no answer within" not in done.output and "after 120 s" not in done.output, done.tail
    assert took < 60, f"the run took {took:.0f} s: a call waited for its 120 s deadline after stdout closed"


@pytest.mark.requirement("ADP-020")
@pytest.mark.parametrize(("fault", "status", "reason"), [
    ("none", "passed", "the adapter exited with status 0 once its stdin closed"),
    ("deaf", "not-met", "at the end of the run the adapter was still running 5 s (shutdown_grace) after its stdin "
                        "closed, and was killed"),
])  # fmt: skip
def test_how_the_adapter_took_end_of_input_is_the_status_of_adp_020(
    tmp_path: Path, run_fault: RunFault, fault: str, status: str, reason: str, marker: str
) -> None:
    """Not not-testable: the end of the session showed it. An unmet SHOULD never fails the run."""
    done = run_fault(fault, *RENDER, f"--conformance-report={tmp_path / 'report.json'}")
    assert done.code == pytest.ExitCode.OK, done.tail
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    found = next(r for r in report["requirements"] if r["id"] == "ADP-020")
    assert (found["status"], found["reason"]) == (status, reason), found
    assert report["run"]["stray_search"] == "subreaper" and _alive(marker) == []
