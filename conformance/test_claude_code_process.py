"""Tier 3, Claude Code: run_claude_code against fake CLIs that really exit, crash and hang.

Each scenario of fixtures/scenarios/claude-code.yaml (and one per SDK result subtype,
generated from the spec's vocabulary) is played by a fake CLI on real pipes; the outcome must
be exactly the one rendered from the spec (conformance.claude_code_process), every text a
sentence of its grammar root without any planted canary, and no process of the call may
outlive it (conformance.processes.call_runs checks /proc, kills survivors and fails). Planning
and the checks both products share are conformance.process_tier.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import Adapter
from conformance.claude_code_process import (
    CONTROL_SUBTYPES,
    MODE_FLAG,
    STREAM_JSON_FLAGS,
    flag_value,
    sent_flags,
    user_text,
)
from conformance.process_tier import (
    batches,
    call,
    canary_site_problems,
    overlap_problems,
    overlapping,
    plan_runs,
    product_scenarios,
    run_problems,
)
from conformance.results import expected_rendering
from conformance.scenarios import PlannedRun, Scenario
from conformance.spec import Spec, load_spec

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
PRODUCT = "claude-code"
_SPEC = load_spec()


def _driver(claim: Claim) -> None:
    claim("process_drivers", "claude-code")


def _check(adapter: Adapter, spec: Spec, planned: PlannedRun, outcome: Json) -> None:
    """The outcome is the scenario's, its texts are clean, the CLI got the run's settings and its
    requests were refused."""
    scenario = planned.scenario
    problems = run_problems(spec, planned, outcome)
    assert not problems, f"scenario {scenario.name} ({scenario.where}): " + "\n".join(problems)
    if outcome["result"] is not None and adapter.declaration.get("bindings"):
        rendered = adapter.call("render_tool_result", outcome["result"])
        assert rendered == expected_rendering(spec, outcome["result"]), (
            f"scenario {scenario.name}: the parent's tool result {rendered!r} does not render {outcome['result']!r}"
        )
        for block in outcome["result"]["output"]:
            assert block["text"] in rendered["text"], (
                f"scenario {scenario.name}: the output text is lost in {rendered!r}"
            )


# --------------------------------------------------------------------------- every scenario


@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, id=s.name, marks=requirement(*s.covers)) for s in product_scenarios(_SPEC, PRODUCT)],
)
def test_scenario(adapter: Adapter, claim: Claim, spec: Spec, scenario: Scenario, tmp_path: Path) -> None:
    """Played on real pipes, the scenario gives exactly the outcome the spec renders for it."""
    _driver(claim)
    planned = plan_runs(spec, scenario, tmp_path)
    for run, outcome in zip(planned, call(adapter, planned), strict=True):
        _check(adapter, spec, run, outcome)


# --------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize(
    "batch",
    [pytest.param(name, id=name) for name in sorted(batches(_SPEC, PRODUCT))],
)
@requirement("CC-042", "CC-024", "CC-025", "CC-027")
def test_concurrent_runs_share_nothing(adapter: Adapter, claim: Claim, spec: Spec, batch: str, tmp_path: Path) -> None:
    """The scenarios of one batch in one call: the fakes overlap in time, and each run still gives
    exactly its own outcome (its own permission facts, cancellation, exit, mode and environment)."""
    _driver(claim)
    members = batches(spec, PRODUCT)[batch]
    assert len(members) >= 6, f"batch {batch} has {len(members)} scenarios; the isolation check needs at least six"
    planned = [run for s in members for run in plan_runs(spec, overlapping(s), tmp_path)]
    outcomes = call(adapter, planned)
    for run, outcome in zip(planned, outcomes, strict=True):
        _check(adapter, spec, run, outcome)
        assert flag_value(sent_flags(run), MODE_FLAG) == run.run["mode"], f"run {run.scenario.name} got another mode"
    problems = overlap_problems(planned)
    assert not problems, "; ".join(problems)


# --------------------------------------------------------------------------- what the provider sends


@requirement("CC-025", "CC-026", "CC-042", "CC-044")
def test_the_cli_gets_its_run_settings(adapter: Adapter, claim: Claim, spec: Spec, tmp_path: Path) -> None:
    """One run per permission mode, in one call: each CLI gets the stream-json flags and its own
    mode, runs in the parent's directory with the run's environment, receives the initialize
    control request and then the task's text as the one user message."""
    _driver(claim)
    [template] = [s for s in product_scenarios(spec, PRODUCT) if s.name == "permission-fact-dropped-on-success"]
    task = [
        {"type": "text", "text": "First part. "},
        {"type": "text", "text": " \t"},
        {"type": "text", "text": "Last."},
    ]
    planned = []
    for mode in spec.vocabulary("claude-code.permission_mode").values:
        [run] = plan_runs(spec, template, tmp_path / str(mode))
        run.run.update(mode=mode, task=task)
        planned.append(run)
    outcomes = call(adapter, planned)
    for run, outcome in zip(planned, outcomes, strict=True):
        assert outcome["start"] == {"published": True}, f"mode {run.run['mode']}: {outcome!r}"
        _check(adapter, spec, run, outcome)  # also: the CLI's command, directory and environment
        flags = sent_flags(run)
        for name, value in STREAM_JSON_FLAGS:
            assert flag_value(flags, name) == value, f"the CLI was not given {name} {value}: {flags!r}"
        assert "--verbose" in flags, f"the CLI was not given --verbose: {flags!r}"
        assert flag_value(flags, MODE_FLAG) == run.run["mode"], f"the CLI was not given its mode: {flags!r}"
        frames = [line["stdin"] for line in run.recorded() if "stdin" in line]
        kinds = [
            f.get("request", {}).get("subtype") if f.get("type") == "control_request" else f.get("type") for f in frames
        ]
        assert kinds[:2] == ["initialize", "user"], f"the CLI received {kinds!r}: initialize, then the user message"
        assert user_text(frames[1]) == "".join(b["text"] for b in task), f"the task arrived as {frames[1]!r}"


# --------------------------------------------------------------------------- redaction coverage


@requirement("RED-008")
def test_every_claude_process_canary_site_is_planted(claim: Claim, spec: Spec) -> None:
    """The scenarios plant a canary at every Claude Code row of canary_sites planted via run_claude_code."""
    _driver(claim)
    problems = canary_site_problems(spec, PRODUCT)
    assert not problems, "; ".join(problems)
    assert set(CONTROL_SUBTYPES) == {
        r["trigger"] for r in spec.table("claude-code", "permission_facts").rows if r["answer"]
    }
    for scenario in product_scenarios(spec, PRODUCT):
        if scenario.plants:
            carried = repr((scenario.actions, scenario.responders, scenario.run, scenario.expect))
            assert any(mark in carried for mark in ("SECRET_", "$env.", "$task.", "executable", "faults", "cwd")), (
                f"scenario {scenario.name} declares plants {scenario.plants} but carries no canary"
            )
