"""Tier 3, Claude Code: run_claude_code against fake CLIs that really exit, crash and hang.

Each scenario of fixtures/scenarios/claude-code.yaml (and one per SDK result subtype,
generated from the spec's vocabulary) is played by a fake CLI on real pipes; the outcome must
be exactly the one rendered from the spec (conformance.claude_code_process), every text a
sentence of its grammar root without any planted canary, and no process of the call may
outlive it (conformance.processes.call_runs checks /proc, kills survivors and fails).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import Adapter
from conformance.claude_code_process import (
    CONTROL_SUBTYPES,
    DEADLINE,
    LABEL,
    MODE_FLAG,
    OPERATION,
    STREAM_JSON_FLAGS,
    PlannedRun,
    batches,
    control_answers,
    expected,
    flag_value,
    leaks,
    overlapping,
    plan,
    refused_before_spawn,
    same_directory,
    scenarios,
    sent_flags,
    user_text,
)
from conformance.processes import call_runs
from conformance.results import expected_rendering
from conformance.scenarios import Scenario
from conformance.spec import Spec, load_spec

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
_SPEC = load_spec()


def _driver(claim: Claim) -> None:
    claim("process_drivers", "claude-code")


def _run(adapter: Adapter, planned: list[PlannedRun]) -> list[Json]:
    return call_runs(adapter, OPERATION, [p.run for p in planned], DEADLINE)


def _check(adapter: Adapter, spec: Spec, planned: PlannedRun, outcome: Json) -> None:
    """The outcome is the scenario's, its texts are clean, and the CLI's requests were refused."""
    scenario = planned.scenario
    problems = leaks(spec, outcome) + control_answers(spec, planned)
    assert not problems, f"scenario {scenario.name} ({scenario.where}): " + "; ".join(problems)
    want = expected(spec, scenario, planned.run)
    assert outcome == want, (
        f"scenario {scenario.name} ({scenario.where}): run_claude_code gave\n  {outcome!r}\nthe spec says\n  {want!r}"
    )
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
    [pytest.param(s, id=s.name, marks=requirement(*s.covers)) for s in scenarios(_SPEC)],
)
def test_scenario(adapter: Adapter, claim: Claim, spec: Spec, scenario: Scenario, tmp_path: Path) -> None:
    """Played on real pipes, the scenario gives exactly the outcome the spec renders for it."""
    _driver(claim)
    planned = plan(scenario, tmp_path)
    for run, outcome in zip(planned, _run(adapter, planned), strict=True):
        _check(adapter, spec, run, outcome)
        if refused_before_spawn(spec, scenario):
            assert run.recorded() == [], (
                f"scenario {scenario.name}: a CLI was started for a request refused at admission"
            )


# --------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize(
    "batch",
    [pytest.param(name, id=name) for name in sorted(batches(_SPEC))],
)
@requirement("CC-042", "CC-024", "CC-025", "CC-027")
def test_concurrent_runs_share_nothing(adapter: Adapter, claim: Claim, spec: Spec, batch: str, tmp_path: Path) -> None:
    """The scenarios of one batch in one call: the fakes overlap in time, and each run still gives
    exactly its own outcome (its own permission facts, cancellation, exit, mode and environment)."""
    _driver(claim)
    members = batches(spec)[batch]
    assert len(members) >= 6, f"batch {batch} has {len(members)} scenarios; the isolation check needs at least six"
    planned = [run for s in members for run in plan(overlapping(s), tmp_path)]
    outcomes = _run(adapter, planned)
    for run, outcome in zip(planned, outcomes, strict=True):
        _check(adapter, spec, run, outcome)
    records = [run.recorded() for run in planned]
    started = max(record[0]["t"] for record in records)
    for run, record in zip(planned, records, strict=True):
        first = record[0]
        assert first["env"][LABEL] == run.run["env"][LABEL], f"run {run.scenario.name} got another run's environment"
        assert flag_value(sent_flags(run), MODE_FLAG) == run.run["mode"], f"run {run.scenario.name} got another mode"
        assert same_directory(first["cwd"], run.run["cwd"]), f"run {run.scenario.name} ran in another directory"
        ends = [line["t"] for line in record if "end" in line]
        assert all(t > started for t in ends), (
            f"the fake of {run.scenario.name} ended before every fake of the call had started: the runs did not overlap"
        )


# --------------------------------------------------------------------------- what the provider sends


@requirement("CC-025", "CC-026", "CC-042", "CC-044")
def test_the_cli_gets_its_run_settings(adapter: Adapter, claim: Claim, spec: Spec, tmp_path: Path) -> None:
    """One run per permission mode, in one call: each CLI gets the stream-json flags and its own
    mode, runs in the parent's directory with the run's environment, receives the initialize
    control request and then the task's text as the one user message."""
    _driver(claim)
    [template] = [s for s in scenarios(spec) if s.name == "permission-fact-dropped-on-success"]
    task = [
        {"type": "text", "text": "First part. "},
        {"type": "text", "text": " \t"},
        {"type": "text", "text": "Last."},
    ]
    planned = []
    for mode in spec.vocabulary("claude-code.permission_mode").values:
        [run] = plan(template, tmp_path / str(mode))
        run.run.update(mode=mode, task=task)
        planned.append(run)
    outcomes = _run(adapter, planned)
    for run, outcome in zip(planned, outcomes, strict=True):
        assert outcome["start"] == {"published": True}, f"mode {run.run['mode']}: {outcome!r}"
        _check(adapter, spec, run, outcome)
        flags = sent_flags(run)
        for name, value in STREAM_JSON_FLAGS:
            assert flag_value(flags, name) == value, f"the CLI was not given {name} {value}: {flags!r}"
        assert "--verbose" in flags, f"the CLI was not given --verbose: {flags!r}"
        assert flag_value(flags, MODE_FLAG) == run.run["mode"], f"the CLI was not given its mode: {flags!r}"
        [first, *lines] = run.recorded()
        assert same_directory(first["cwd"], run.run["cwd"]), f"the CLI ran in {first['cwd']}, not {run.run['cwd']}"
        missing = {k: v for k, v in run.run["env"].items() if first["env"].get(k) != v}
        assert not missing, f"the CLI's environment lacks {sorted(missing)} of the run's environment"
        frames = [line["stdin"] for line in lines if "stdin" in line]
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
    sites = {
        r["site"]
        for r in spec.table("redaction", "canary_sites").rows
        if r["product"] == "Claude Code" and OPERATION in r["plant_via"]
    }
    planted = {site for s in scenarios(spec) for site in s.plants}
    assert planted == sites, (
        f"not planted: {sorted(sites - planted)}; not a run_claude_code site: {sorted(planted - sites)}"
    )
    assert set(CONTROL_SUBTYPES) == {
        r["trigger"] for r in spec.table("claude-code", "permission_facts").rows if r["answer"]
    }
    for scenario in scenarios(spec):
        if scenario.plants:
            carried = repr((scenario.actions, scenario.responders, scenario.run, scenario.expect))
            assert any(mark in carried for mark in ("SECRET_", "$env.", "$task.", "executable", "faults", "cwd")), (
                f"scenario {scenario.name} declares plants {scenario.plants} but carries no canary"
            )
