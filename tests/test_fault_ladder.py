"""The fault ladder (issue #29), one test per row of fixtures/faults/ladder.yaml: a pytest of its
own runs a small slice of the suite against an adapter with one fault, and the run must end with
the row's exit status, blame exactly the row's requirements, write a report a strict JSON parser
reads (NaN refused), take no more than a few times a clean run of the same slice measured in the
same session (a ratio, never a time), and leave no process behind: none adopted by this process
(a child subreaper, so that an orphan however detached is re-parented here and seen), none
carrying the run's marker. And SIGTERM to a run mid-call, while it starts, and to the xdist
controller: the adapters and their detached grandchildren are killed, and the report and the
summary are written, marked incomplete.

Set $FAULT_LADDER_RECORD to a file to get each row's measurements there as JSON lines, its wall
and CPU time over the clean run's (the table of docs/measurements/2026-12-02/fault-ladder.md was
made so)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.harness import processes

FAULTS = Path(__file__).resolve().parents[1] / "fixtures" / "faults"
LADDER = yaml.safe_load((FAULTS / "ladder.yaml").read_text(encoding="utf-8"))
MARKER_VARIABLE = "FAULT_LADDER_MARKER"
# The cost the ladder guards against is a wait per call: a fault that costs every one of a slice's
# 20 calls the 10 s call deadline runs 25x or more a clean run (2-8 s, mostly start-up). The
# clean run is measured at another moment than the row, under whatever else the machine does, so
# the ratio carries scheduling noise (7x seen for a 3x row with every core busy): the bound sits
# well above that noise and well below a per-call deadline. The measured ratios, the issue's
# "about twice" target among them, are written to the record (FAULT_LADDER_RECORD), not asserted.
SLOWER_AT_MOST = 15.0


@dataclass(frozen=True)
class Run:
    code: int
    seconds: float
    report: str  # the JSON report's text ("" when not written)
    summary: str
    output: str
    leftovers: list[str]
    cpu: float = 0.0  # CPU seconds of the run and the processes it waited for: less noisy than its wall time


def _strict(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def _impl(spec: str) -> str:
    return f"exec:{sys.executable} {FAULTS / spec.removeprefix('exec:')}" if spec.startswith("exec:") else spec


def _command(tmp: Path, impl: str, slice_args: list[str], workers: int = 0) -> list[str]:
    xdist = ["-n", str(workers)] if workers else ["-p", "no:xdist"]
    return [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *xdist, "-p", "no:randomly", "-q",
        "-o", "timeout=0", "--rootdir", str(tmp), f"--impl={_impl(impl)}",
        f"--conformance-report={tmp / 'report.json'}", f"--conformance-summary={tmp / 'summary.md'}", *slice_args,
    ]  # fmt: skip


def _environment(marker: str, extra: dict[str, str]) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(FAULTS), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, MARKER_VARIABLE: marker, "FAULT_MARKER": marker, **extra}


def _leftovers(marker: str) -> list[str]:
    """Processes the run left: orphans adopted here, and any carrying or naming the marker; killed."""
    orphans = processes.adopted(set())
    found = [s for s in map(processes.describe, orphans) if s is not None]
    found += [s for s in processes.carrying({marker}, MARKER_VARIABLE) if s.pid not in {f.pid for f in found}]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in {f.pid for f in found}:
            with_marker = processes.describe(int(entry.name))
            if with_marker is not None and marker in " ".join(with_marker.argv):
                found.append(with_marker)
    processes.kill_pids([s.pid for s in found])
    processes.reap(orphans)
    return [str(s) for s in found]


def _start(
    tmp: Path, impl: str, slice_args: list[str], marker: str, env: dict[str, str], workers: int = 0
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _command(tmp, impl, slice_args, workers),
        cwd=tmp,
        env=_environment(marker, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _finish(popen: subprocess.Popen[str], tmp: Path, marker: str, started: float, cpu: float = 0.0) -> Run:
    try:
        output, _ = popen.communicate(timeout=600)
    finally:
        with_group = popen.pid
        if popen.poll() is None:
            os.killpg(with_group, signal.SIGKILL)
            popen.wait()
    seconds = time.monotonic() - started
    report, summary = tmp / "report.json", tmp / "summary.md"
    return Run(
        popen.returncode,
        seconds,
        report.read_text(encoding="utf-8") if report.exists() else "",
        summary.read_text(encoding="utf-8") if summary.exists() else "",
        output,
        _leftovers(marker),
        _cpu() - cpu,
    )


def _run(tmp: Path, impl: str, slice_args: list[str], env: dict[str, str]) -> Run:
    tmp.mkdir(parents=True, exist_ok=True)
    marker = f"ladder-{uuid.uuid4().hex}"
    started, cpu = time.monotonic(), _cpu()
    return _finish(_start(tmp, impl, slice_args, marker, env), tmp, marker, started, cpu)


@pytest.fixture(scope="module", autouse=True)
def subreaper() -> None:
    """This process adopts what a run leaves: an orphan that detached is still found."""
    if processes.become_subreaper() != "subreaper":
        pytest.skip(f"no child subreaper here ({processes.stray_search()}): leftovers could not all be seen")


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Each slice's clean run, measured once in this session, lazily: what a row's time is compared with."""

    class Lazy(dict[str, Run]):
        def __missing__(self, name: str) -> Run:
            clean = _run(tmp_path_factory.mktemp(f"clean-{name}"), LADDER["clean"]["impl"], LADDER["slices"][name], {})
            assert clean.code == 0 and not clean.leftovers, clean.output[-3000:]
            self[name] = clean
            return clean

    return Lazy()


def _record(row: dict[str, Any], run: Run, clean: Run, blamed: list[str], unmet: list[str]) -> None:
    """The row's measurements: its wall time over the clean run's (what a wait costs shows here, with
    the machine's noise), and its CPU time over the clean run's (what work costs, with less noise)."""
    if path := os.environ.get("FAULT_LADDER_RECORD"):
        entry = {"fault": row["fault"], "exit": run.code, "blame": blamed, "not_met": unmet,
                 "ratio": round(run.seconds / clean.seconds, 2), "cpu_ratio": round(run.cpu / max(clean.cpu, 1e-3), 2),
                 "seconds": round(run.seconds, 1), "cpu": round(run.cpu, 1),
                 "leftovers": len(run.leftovers)}  # fmt: skip
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


@pytest.mark.requirement("ADP-013", "ADP-014", "ADP-015", "ADP-016", "ADP-019", "ADP-020", "ADP-021", "ADP-022")
@pytest.mark.reaches("adapter-protocol.exec_limits", 5, 7, 8)
@pytest.mark.parametrize("row", LADDER["rows"], ids=[row["fault"] for row in LADDER["rows"]])
def test_fault(tmp_path: Path, baselines: dict[str, Run], row: dict[str, Any]) -> None:
    """One fault: its exit status and blame, a strict report, a bounded cost, nothing left."""
    env = {name: value.replace("{tmp}", str(tmp_path)) for name, value in row["env"].items()}
    run = _run(tmp_path, row["impl"], LADDER["slices"][row["slice"]], env)
    assert run.code == row["exit"], run.output[-4000:]
    report = _strict(run.report)  # written, and strict JSON whatever the adapter wrote
    blamed = sorted(r["id"] for r in report["requirements"] if r["status"] == "violated")
    unmet = {r["id"]: r["reason"] for r in report["requirements"] if r["status"] == "not-met"}
    clean = baselines[row["slice"]]
    ratio = run.seconds / clean.seconds
    _record(row, run, clean, blamed, sorted(unmet))
    if "not_met" in row:  # a SHOULD the run found unmet: named, and why, in the report and the summary
        assert sorted(unmet) == sorted(row["not_met"]), unmet
        assert all(f"| {rid} " in run.summary or f"[{rid}]" in run.summary for rid in unmet), run.summary
        assert all(reason in run.summary for reason in unmet.values()), run.summary
    if row["blame"] is not None:
        assert blamed == sorted(row["blame"]), run.output[-4000:]
    else:
        assert blamed and not [rid for rid in blamed if rid.startswith("ADP-")], blamed  # the content rules
    assert run.leftovers == [], run.leftovers
    assert ratio < SLOWER_AT_MOST, f"{row['fault']}: {ratio:.1f}× a clean run of the same slice"


def _terminated(tmp: Path, faults: str, workers: int = 0, group: bool = False) -> Run:
    """A run sent SIGTERM (to pytest's pid alone, as ``kill PID`` does, or to its process ``group``,
    as a shell's job control does) once the adapter, with ``faults``, is inside the call that
    hangs; what it did then."""
    state, marker = tmp / "called", f"ladder-{uuid.uuid4().hex}"
    env = {"FAULT_EXEC_LINES": faults, "FAULT_STATE": str(state)}
    started = time.monotonic()
    popen = _start(tmp, "exec:fault_exec_lines.py", LADDER["slices"]["render"], marker, env, workers)
    while not state.exists() and popen.poll() is None:
        time.sleep(0.05)  # until the adapter is inside a call (a wait, not a timed assertion)
    if group:
        os.killpg(popen.pid, signal.SIGTERM)  # pytest leads its group (start_new_session)
    else:
        popen.send_signal(signal.SIGTERM)
    return _finish(popen, tmp, marker, started)


@pytest.mark.requirement("ADP-021")
@pytest.mark.parametrize("faults", ["detached,hang", "detached,describe-hang"], ids=["mid-call", "at-start"])
def test_sigterm_kills_the_adapter_and_its_grandchild_and_writes_the_report(tmp_path: Path, faults: str) -> None:
    """SIGTERM reaches pytest while a call is in flight (the adapter hangs in it, having started a
    grandchild that left its session with a cleared environment), or while the suite starts (the
    adapter hangs at describe, before any session would close it; before the plugin installs its
    handler no adapter has started, and SIGTERM's default, the end of pytest, leaves nothing):
    both processes are killed, and the report and the summary are written, marked incomplete."""
    run = _terminated(tmp_path, faults)
    assert run.leftovers == [], run.leftovers
    report = _strict(run.report)
    assert "SIGTERM" in report["run"].get("incomplete", ""), run.output[-3000:]
    assert report["run"]["verdict"] != "conforms" and run.code != 0
    assert "**Run incomplete**: terminated by SIGTERM" in run.summary, run.summary
    if faults.endswith("describe-hang"):
        assert report["run"]["incomplete"].endswith("before any test") and report["tests"] == [], report["run"]


@pytest.mark.requirement("ADP-021")
@pytest.mark.parametrize("group", [False, True], ids=["to-the-controller", "to-the-group"])
def test_sigterm_under_xdist_reaches_the_workers(tmp_path: Path, group: bool) -> None:
    """Under xdist (-n 2) SIGTERM to the controller alone is sent on to the workers: each kills its
    adapter, hung in a call, and the controller writes the report and the summary, marked
    incomplete. Without that, execnet killed the workers at last and the controller found their
    adapters as strays, blaming ADP-021 on an adapter that did nothing wrong. SIGTERM to the whole
    group reaches each worker twice (the kernel's, the controller's): the second is only noted."""
    run = _terminated(tmp_path, "hang", workers=2, group=group)
    assert run.leftovers == [], run.leftovers
    report = _strict(run.report)
    assert "SIGTERM" in report["run"].get("incomplete", ""), run.output[-3000:]
    assert run.code == pytest.ExitCode.INTERRUPTED, run.output[-3000:]
    assert "left running" not in run.output, run.output[-3000:]
    assert [r["id"] for r in report["requirements"] if r["status"] == "violated"] == [], run.output[-3000:]
    assert "**Run incomplete**: terminated by SIGTERM" in run.summary, run.summary
