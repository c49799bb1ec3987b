"""The Agent SDK driver (conformance/products/sdk_driver.mjs, run by conformance/products/sdk_run.py)
offline: a tiny fake SDK module (fixtures/fakes/agent_sdk) stands in for the npm package, so the
driver's log, the recorder's use of it and the replay of what it recorded are tested without
the real SDK, which runs in the real tier only (conformance/test_real_products.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.areas.claude_code.oracle import expected_outcome
from conformance.products.packages import Installed, ProductError
from conformance.products.recorder import prepare, record_case, server_for, write_recording
from conformance.products.recordings import expected_results, load_cases, load_recording, recording_file
from conformance.products.replay import claude_code_scenario
from conformance.products.sdk_run import query_options, sdk_log
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed; .ci/run installs it")

SPEC = load_spec()
CASES = {c.name: c for c in load_cases(SPEC) if c.product == "claude-code"}
PACKAGE = "@anthropic-ai/claude-agent-sdk"


@pytest.fixture
def fake_sdk(tmp_path: Path) -> Installed:
    """The fake SDK installed as npm lays out the real one: the package, and its CLI in a
    platform package beside it."""
    source = fixtures_dir() / "fakes" / "agent_sdk"
    modules = tmp_path / "install" / "node_modules" / "@anthropic-ai"
    (modules / "claude-agent-sdk").mkdir(parents=True)
    (modules / "claude-agent-sdk-fake").mkdir()
    for name in ("package.json", "sdk.mjs"):
        shutil.copy(source / name, modules / "claude-agent-sdk" / name)
    binary = modules / "claude-agent-sdk-fake" / "claude"
    shutil.copy(source / "claude.mjs", binary)
    binary.chmod(0o755)
    return Installed("claude-code", PACKAGE, "0.0.0-fake", tmp_path / "install", binary, "0.0.0-fake (Claude Code)")


def _log(case_name: str, installed: Installed, folder: Path) -> list[dict[str, object]]:
    case = CASES[case_name]
    folder.mkdir()
    with server_for(case, folder) as server:
        run = prepare(case, installed, server, folder)
        log, _ = sdk_log(installed, run, case.mode, case.task, folder)
    return log


def test_the_driver_logs_the_spawn_the_wire_the_messages_and_the_end(fake_sdk: Installed, tmp_path: Path) -> None:
    """Every line is one JSON observation, in order: the spawn the SDK asked for (its flags and
    the variables it set), what it wrote to the CLI and read back, each yielded message, the
    iteration's end and the CLI's exit."""
    log = _log("answer", fake_sdk, tmp_path / "run")
    kinds = [next(iter(item)) for item in log]
    assert kinds[0] == "spawn" and "query_end" in kinds and "exit" in kinds
    spawn = log[0]["spawn"]
    assert isinstance(spawn, dict) and Path(spawn["command"]).resolve() == fake_sdk.binary.resolve()
    assert spawn["args"][-2:] == ["--permission-mode", "dontAsk"] and "--permission-prompt-tool" in spawn["args"]
    assert spawn["env_added"] == {"CLAUDE_AGENT_SDK_VERSION": "0.0.0-fake", "CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}
    sent = [item["stdin"] for item in log if "stdin" in item]
    assert [frame["type"] for frame in sent] == ["control_request", "user"]  # type: ignore[index]
    messages = [item["message"] for item in log if "message" in item]
    assert [m["type"] for m in messages] == ["system", "assistant", "result"]  # type: ignore[index]
    assert messages[-1]["result"] == "Hello from the fake model."  # type: ignore[index]
    assert log[kinds.index("query_end")] == {"query_end": {"thrown": None}}


@pytest.mark.parametrize("name", ["answer", "http-500"])
def test_a_recorded_case_replays_as_its_real_recording(name: str, fake_sdk: Installed, tmp_path: Path) -> None:
    """A case recorded through the driver is a valid recording; its result message has the subtype
    and is_error of the committed real recording of the same case, and the spec's classification
    reads it as the case expects (the thrown error after an error result included)."""
    case = CASES[name]
    recording = record_case(SPEC, case, fake_sdk, tmp_path / "run")
    path = write_recording(recording, tmp_path / "recorded")
    assert load_recording(SPEC, path)["client"]["sdk"] == f"{PACKAGE}@0.0.0-fake"
    real = load_recording(SPEC, recording_file("claude-code", SPEC.areas["claude-code"].shipped[0], name))

    def result(of: dict[str, object]) -> tuple[object, object]:
        [message] = [i["message"] for i in of["wire"] if "message" in i and i["message"]["type"] == "result"]  # type: ignore[attr-defined]
        return message["subtype"], message["is_error"]

    assert result(recording) == result(real)
    scenario = claude_code_scenario(recording)
    assert ("exception" in scenario) == (name == "http-500")
    assert expected_outcome(SPEC, scenario) in expected_results(SPEC, case)


def test_the_cases_flags_become_query_options(tmp_path: Path) -> None:
    options = query_options(
        ["--model", "m", "--max-turns", "1", "--allowedTools", "Read,Write", "--resume", "s"], "plan", tmp_path, {}
    )
    assert options == {
        "cwd": str(tmp_path),
        "env": {},
        "permissionMode": "plan",
        "model": "m",
        "maxTurns": 1,
        "allowedTools": ["Read", "Write"],
        "resume": "s",
    }
    assert query_options([], "bypassPermissions", tmp_path, {})["allowDangerouslySkipPermissions"] is True
    with pytest.raises(ProductError, match="no query\\(\\) option for the CLI argument '--verbose'"):
        query_options(["--verbose"], "dontAsk", tmp_path, {})


def test_an_sdk_that_will_not_load_is_a_driver_failure(fake_sdk: Installed, tmp_path: Path) -> None:
    """The driver's own failure is a ProductError carrying its stderr, never a recording."""
    (fake_sdk.package_dir / "throw-at-import").touch()
    with pytest.raises(ProductError, match="the fake SDK refuses to load"):
        _log("answer", fake_sdk, tmp_path / "run")
