"""The official Agent SDK can drive the fake Claude Code CLI.

A provider built on the SDK (for Python, ``claude-agent-sdk`` pointed at the fake through
``cli_path``) must be able to run the process tier too: the fake has to pass the SDK's
initialize handshake, take its user message and write messages the SDK's parser accepts. Every
Claude Code scenario that publishes a run and ends with a result is played through the SDK's
``query()``; the SDK must yield the scenario's result and no parse error.

Needs ``claude-agent-sdk`` (about 450 MB with its bundled CLI), so it is not a dev dependency:
CI's real-products step installs it and runs this module; elsewhere the module is skipped,
saying so.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from conformance.process.scenarios import Scenario, fake_argv, write_script
from conformance.process.tier import product_scenarios
from conformance.spec import load_spec

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (CI's real-products step installs it)"
)
anyio = pytest.importorskip("anyio")

Json = Any


def _result_frame(scenario: Scenario) -> Json | None:
    """The result the scenario's CLI writes, if it plays without a provider's cooperation: no
    control requests to answer, no hang, no death before or instead of the result, no grandchild
    holding stdout open (only a provider's teardown ends those), no values echoed from the run."""
    frames = [a["out"] for a in scenario.actions if isinstance(a.get("out"), dict)]
    endings = [a for a in scenario.actions if {"hang", "signal", "exit", "close_stdout", "grandchild"} & set(a)]
    if "$" in repr(frames):
        return None
    if scenario.expect["start"] != "published" or scenario.run or endings:
        return None
    if any(f.get("type") == "control_request" for f in frames):
        return None
    results = [f for f in frames if f.get("type") == "result"]
    return results[-1] if len(results) == 1 else None


SCENARIOS = [s for s in product_scenarios(load_spec(), "claude-code") if _result_frame(s) is not None]


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.name) for s in SCENARIOS])
def test_the_python_agent_sdk_drives_the_fake_cli(scenario: Scenario, tmp_path: Path) -> None:
    script = write_script(scenario, tmp_path)
    cli = tmp_path / "claude"
    cli.write_text("#!/bin/sh\nexec " + shlex.join(fake_argv("claude-code", script)) + ' "$@"\n', encoding="utf-8")
    cli.chmod(0o755)
    options = sdk.ClaudeAgentOptions(cli_path=str(cli), cwd=str(tmp_path), permission_mode="default")

    async def drive() -> list[Any]:
        return [message async for message in sdk.query(prompt="Summarise the repository.", options=options)]

    messages = anyio.run(drive)
    results = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    expected = _result_frame(scenario)
    assert expected is not None
    assert len(results) == 1, f"the SDK yielded {messages!r}"
    assert results[0].subtype == expected["subtype"]
    assert results[0].is_error == expected.get("is_error", False)
    assert results[0].result == expected.get("result")


def test_some_scenarios_qualify() -> None:
    """The selection above must not quietly shrink to nothing."""
    assert len(SCENARIOS) >= 5, [s.name for s in SCENARIOS]
