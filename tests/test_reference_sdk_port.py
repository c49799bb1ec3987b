"""The reference's Python port of the Agent SDK's wire (reference_impl/claude_code_sdk.py) against
what the real SDK did in the recordings (fixtures/recordings/claude-code/<release>/, and 0.3.333
beside docs/measurements/2026-12-02/sdk-stack.md): at each recorded release the port writes the
same initialize request and user message, sets the same environment and flag form, yields exactly
the messages query() yielded from the same CLI frames and throws what it threw."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from reference_impl.claude_code import ClaudeCodeRun, SdkIteratorError
from reference_impl.claude_code_sdk import Query, sdk_environment, sdk_wire, valued
from reference_impl.process import ProcessOutcome

Json = dict[str, Any]
MEASURED = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "2026-12-02" / "sdk-stack" / "claude-code"
RECORDINGS = sorted(
    [*(fixtures_dir() / "recordings" / "claude-code").glob("*/*.json"), *MEASURED.glob("*/*.json")],
    key=lambda p: (p.parent.name, p.name),
)


class RecordedCli:
    """The CLI of one recording as the port sees it: its stdout frames, then its exit."""

    def __init__(self, recording: Json) -> None:
        self.frames: queue.Queue[tuple[str, Any]] = queue.Queue()
        for item in recording["wire"]:
            if "stdout" in item:
                self.frames.put(("frame", item["stdout"]))
        self.frames.put(("eof", None))
        [exit_] = [item["exit"] for item in recording["wire"] if "exit" in item]
        self._outcome = ProcessOutcome(exit_["exitCode"], exit_["signal"])
        self.exited = threading.Event()
        self.exited.set()
        self.written: list[Json] = []

    def write(self, frame: Json) -> None:
        self.written.append(frame)

    def end_input(self) -> None:
        pass

    def final_outcome(self) -> ProcessOutcome:
        return self._outcome


def _query(recording: Json) -> tuple[Query, RecordedCli]:
    run = ClaudeCodeRun(recording["mode"])
    run.version = recording["version"]
    cli = RecordedCli(recording)
    return Query(cli, run, threading.Event()), cli  # type: ignore[arg-type]  # the CLI's side, duck-typed


def _without_id(frame: Json) -> Json:
    return {k: v for k, v in frame.items() if k != "request_id"}


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_port_does_what_the_real_sdk_did(path: Path) -> None:
    recording = json.loads(path.read_text(encoding="utf-8"))
    query, cli = _query(recording)
    query.open()
    query.send_task("Read hello.txt and say what it holds.")
    stdin = [item["stdin"] for item in recording["wire"] if "stdin" in item]
    assert [_without_id(f) for f in cli.written] == [_without_id(f) for f in stdin[:2]]

    yielded: list[Json] = []
    thrown = None
    try:
        yielded.extend(query.messages())
    except SdkIteratorError as error:
        thrown = str(error)
    assert yielded == [item["message"] for item in recording["wire"] if "message" in item]
    [end] = [item["query_end"] for item in recording["wire"] if "query_end" in item]
    assert thrown == (end["thrown"] or {}).get("message")


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_port_sets_the_sdks_environment_and_flag_form(path: Path) -> None:
    recording = json.loads(path.read_text(encoding="utf-8"))
    version, argv = recording["version"], recording["argv"]
    assert sdk_environment(version) == recording["client"]["sdk_env"]
    mode_flag = valued(version, "--permission-mode", recording["mode"])
    assert any(argv[i : i + len(mode_flag)] == mode_flag for i in range(len(argv)))


def test_the_ports_release_data_agrees_with_the_spec_table() -> None:
    """The port's own per-release data (a provider's) and the spec's sdk_wire boundaries agree,
    at the first release of each row and at the last release without it."""
    rows = {r["name"]: r for r in load_spec().table("claude-code", "sdk_wire").rows}
    facts: dict[str, Callable[[str], bool]] = {
        "valued-flag-form": lambda v: sdk_wire(v).joined_flags,
        "session-state-frames": lambda v: sdk_wire(v).reads_session_state,
        "crash-reporting-variable": lambda v: "BUN_ENABLE_CRASH_REPORTING" in sdk_environment(v),
    }
    for name, has in facts.items():
        assert has(rows[name]["first_release"]) and not has(rows[name]["last_without"]), name


def test_every_sdk_wire_boundary_is_two_adjacent_published_releases() -> None:
    """Each row of sdk_wire names a covered release and, unless it is the base's, the published
    release right before it (the two releases whose sdk.mjs were compared)."""
    spec = load_spec()
    published = (spec.areas["claude-code"].product or {})["releases"]["versions"]
    for row in spec.table("claude-code", "sdk_wire").rows:
        at = published.index(row["first_release"])
        assert row["last_without"] == (published[at - 1] if row["last_without"] is not None else None), row["name"]
        assert (row["last_without"] is None) == (at == 0), row["name"]
