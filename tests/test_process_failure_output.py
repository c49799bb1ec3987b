"""A failing process scenario and a failing recording replay explain themselves: in the terminal
and in the JSON report, the requirement's ID, title and text, the operation and its input, the
expected and actual values, and for a scenario the wire transcript both ways and the stderr tail
of the fake product (for a replay: the case, the recording and an excerpt of its transcript)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.process.calls import ProcessTierFailure, call_runs
from conformance.products.recordings import recording_file
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

KNOWN_BAD = fixtures_dir() / "known_bad"


def _failure(run: Any, test: str) -> dict[str, Any]:
    """The one failure record of ``test`` in the run's JSON report."""
    [entry] = [t for t in run.report["tests"] if t["nodeid"].endswith(test)]
    assert entry["outcome"] == "failed" and entry["attribution"] == "exact", entry
    [failure] = entry["failures"]
    return dict(failure)


def test_a_process_scenario_failure_shows_the_rule_the_run_and_its_wire(run_suite: RunSuite) -> None:
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_codex_process",
        "-k",
        "test_scenario and stderr-secrets-and-split-signatures",
        impl="bad_cdx_stderr_in_diagnostic",
        importable=[KNOWN_BAD],
        report=True,
    )
    assert run.code == 1, run.tail
    spec = load_spec()
    failure = _failure(run, "test_scenario[stderr-secrets-and-split-signatures]")
    assert [r["id"] for r in failure["requirements"]] == ["CDX-041", "RED-006"]
    for req in failure["requirements"]:  # ID, title and text, in the report and in the terminal
        wanted = spec.requirement(req["id"])
        assert (req["title"], req["text"]) == (wanted.title, " ".join(wanted.text.split()))
        assert f"violates {wanted.id} ({wanted.level}) {wanted.title}: {req['text']}" in run.output
    # The operation and its input: the batch of runs, as sent.
    assert failure["operation"] == "run_codex"
    [sent] = failure["input"]["runs"]
    assert sent["mode"] == "never" and "--script" in sent["argv"]
    assert "operation: run_codex" in run.output and f"input: {json.dumps(failure['input'])[:200]}" in run.output
    # Expected and actual outcomes, and where they differ.
    expected, actual = failure["expected"]["result"], failure["actual"]["result"]
    assert actual["diagnostic"].startswith(expected["diagnostic"] + "\nstderr: ")
    assert "bytes of the product's stderr are in the text" in failure["difference"]
    assert f"expected: {json.dumps(failure['expected'], ensure_ascii=False)[:200]}" in run.output
    assert f"actual: {json.dumps(failure['actual'], ensure_ascii=False)[:200]}" in run.output
    # The wire both ways and the stderr tail of the fake app-server.
    wire = failure["sections"]["wire transcript"]
    assert '"method": "turn/start"' in wire and "fake received:" in wire
    assert '"method": "turn/completed"' in wire and "fake sent:" in wire
    tail = failure["sections"]["stderr tail"]
    assert "ver; reject command SECRET_TOKEN /private/secret.txt" in tail
    for title in ("wire transcript", "stderr tail", "scenario"):
        assert f"\n{title}:\n" in run.output or f"{title}:\n" in run.output


def test_a_surviving_process_is_blamed_on_cleanup_only(run_suite: RunSuite) -> None:
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_codex_process",
        "-k",
        "test_scenario and grandchild-torn-down",
        impl="bad_cdx_child_left_running",
        importable=[KNOWN_BAD],
        report=True,
    )
    assert run.code == 1, run.tail
    failure = _failure(run, "test_scenario[grandchild-torn-down]")
    assert [r["id"] for r in failure["requirements"]] == ["CDX-069"]
    assert failure["operation"] == "run_codex" and failure["input"]["runs"]
    assert "survivors of run 0" in failure["sections"] and "still alive" in failure["difference"]
    assert "violates CDX-069 (MUST) dispose() settles only after the tree exits" in run.output


def test_a_recording_replay_failure_shows_the_case_and_the_transcript(tmp_path: Path, run_suite: RunSuite) -> None:
    adapter = tmp_path / "replay_drops_variant.py"
    adapter.write_text(
        "import reference_impl\n"
        "globals().update({n: getattr(reference_impl, n) for n in reference_impl.__all__})\n"
        "def codex_outcome(request):\n"
        "    out = reference_impl.codex_outcome(request)\n"
        "    if 'diagnostic' in out:  # the bug: a string variant reported as unknown\n"
        "        out['diagnostic'] = out['diagnostic'].replace('internalServerError', 'unknown')\n"
        "    return out\n",
        encoding="utf-8",
    )
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_recordings",
        "-k",
        "codex-http-500",
        impl="replay_drops_variant",
        importable=[tmp_path],
        report=True,
    )
    assert run.code == 1, run.tail
    failure = _failure(run, "test_recording_replays[codex-http-500]")
    ids = [r["id"] for r in failure["requirements"]]
    assert ids == ["CDX-002"], failure  # string variants are kept verbatim: the field that differs
    assert failure["operation"] == "codex_outcome" and "events" in failure["input"]
    assert "internalServerError" in failure["expected"]["diagnostic"]
    assert "category: unknown" in failure["actual"]["diagnostic"]
    assert "stage 'turn' and category 'unknown', not 'turn' and 'internalServerError'" in failure["difference"]
    sections = failure["sections"]
    assert sections["recording"] == str(recording_file("codex", "0.147.0", "http-500"))
    assert "codex-http-500" in sections["case"] and "client sent:" in sections["transcript excerpt"]
    assert "transcript excerpt:" in run.output and f"violates {ids[0]}" in run.output


def test_a_failure_on_the_wire_shows_the_wire_not_two_equal_outcomes(tmp_path: Path, run_suite: RunSuite) -> None:
    """The run fails as it must (stage turn, unknown) but its reply to the unsupported request is
    never written: the outcomes are equal, so the failure shows the replies expected and found,
    says where the difference is, and keeps the outcome in a section."""
    (tmp_path / "drops_error_replies.py").write_text(
        "import reference_impl\n"
        "from reference_impl import codex_process\n"
        "globals().update({n: getattr(reference_impl, n) for n in reference_impl.__all__})\n"
        "class DropsErrorReplies(codex_process.CodexProcessRun):\n"
        "    def _write(self, frame):\n"
        "        if 'error' not in frame:  # the bug: a -32603 reply is never written\n"
        "            super()._write(frame)\n"
        "def run_codex(request):\n"
        "    return codex_process.run_codex(request, DropsErrorReplies)\n",
        encoding="utf-8",
    )
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_codex_process",
        "-k",
        "test_scenario and unsupported-server-request",
        impl="drops_error_replies",
        importable=[tmp_path],
        report=True,
    )
    assert run.code == 1, run.tail
    failure = _failure(run, "test_scenario[unsupported-server-request]")
    assert [r["id"] for r in failure["requirements"]] == ["CDX-031"]
    assert failure["expected"] == {"replies to request": 7, "count": 1}
    assert failure["actual"] == {"replies": [], "count": 0}
    assert "not in the outcome" in failure["difference"] and "count: expected 1, got 0" in failure["difference"]
    assert "category: unknown" in failure["sections"]["outcome (as the spec renders it)"]


class _Adapter:
    """An adapter whose process operation hangs, or leaves a process of its first run running."""

    def __init__(self, hang: bool, rejected: bool) -> None:
        self.hang, self.rejected = hang, rejected
        self.children: list[subprocess.Popen[bytes]] = []

    def call(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        if self.hang:  # answers only after the deadline, and starts nothing
            time.sleep(1)
            return {"runs": []}
        env = request["runs"][0]["env"]
        self.children.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env))
        start = {"rejected": "subagent-claude-code: x"} if self.rejected else {"published": True}
        return {"runs": [{"start": start, "result": None, "dispose": []} for _ in request["runs"]]}


RUN = {"argv": ["x"], "task": [], "cwd": None, "env": {"PATH": "/usr/bin:/bin"}, "mode": "dontAsk"}


def test_a_hung_call_blames_its_deadline_and_a_survivor_its_cleanup_rule() -> None:
    with pytest.raises(ProcessTierFailure) as hung:
        call_runs(_Adapter(hang=True, rejected=False), "run_claude_code", [RUN], deadline=0.2)
    assert hung.value.requirements == ("ADP-018",) and "did not answer within 0.2 s" in str(hung.value)
    for rejected, blamed in ((True, ("CC-034",)), (False, ("CC-039",))):
        adapter = _Adapter(hang=False, rejected=rejected)
        with pytest.raises(ProcessTierFailure) as survived:
            call_runs(adapter, "run_claude_code", [RUN, RUN])
        assert survived.value.requirements == blamed, rejected  # only the run whose process survived
        assert list(survived.value.sections) == ["survivors of run 0"]
        assert all(child.wait(5) == -9 for child in adapter.children)  # the scan killed them
