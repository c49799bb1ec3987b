"""Tier 3, Claude Code: run_claude_code against fake CLIs that really exit, crash and hang.

Each scenario of fixtures/scenarios/claude-code.yaml (and one per SDK result subtype,
generated from the spec's vocabulary) is played by a fake CLI on real pipes; the outcome must
be exactly the one rendered from the spec (conformance.process.claude_code), every text a
sentence of its grammar root without any planted canary, and no process of the call may
outlive it (conformance.process.calls.call_runs checks /proc, kills survivors and fails). Planning
and the checks both products share are conformance.process.tier.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.areas.results.strategies import expected_rendering
from conformance.harness.adapter import Adapter
from conformance.plugin import contract
from conformance.process.ahead import Played, plays
from conformance.process.checks import canary_site_problems, check_runs, check_stages, transcript
from conformance.process.claude_code import (
    BYPASS,
    CONTROL_SUBTYPES,
    MODE_FLAG,
    PROMPT_TOOL_FLAG,
    SDK_VARIABLES,
    STREAM_JSON_FLAGS,
    flag_value,
    sent_flags,
    user_text,
)
from conformance.process.marks import checks, reaches
from conformance.process.scenarios import PlannedRun, Scenario
from conformance.process.tier import batches, overlapping, plan_runs, product_scenarios
from conformance.spec import Spec
from conformance.verdict.blame import Violation, expect

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"render_tool_result", "run_claude_code"})
_RENDER = "render_tool_result"  # a harness that implements it renders each result as well

Claim = Callable[[str, str], None]
Json = dict[str, Any]
requirement = pytest.mark.requirement
PRODUCT = "claude-code"
_SPEC = contract()  # the spec at the claimed product versions


def _driver(claim: Claim) -> None:
    claim("process_drivers", "claude-code")


def _rendering_requirements(spec: Spec) -> tuple[str, ...]:
    """The rules of the parent's tool result: tables headlines and render_fragments."""
    tables = [spec.table("results", name) for name in ("headlines", "render_fragments")]
    return tuple(dict.fromkeys(r for t in tables for r in t.requirements))


def _check(
    adapter: Adapter, spec: Spec, planned: list[PlannedRun], outcomes: list[Json], overlap: bool = False
) -> None:
    """The outcomes are the scenarios', their texts are clean, the CLI got the run's settings and its
    requests were refused; a bound adapter renders each result as the parent's tool result."""
    check_runs(spec, planned, outcomes, overlap=overlap)
    for outcome in outcomes:
        if outcome["result"] is not None and adapter.claims("operations", _RENDER):
            rendered = adapter.call("render_tool_result", outcome["result"])
            wanted = expected_rendering(spec, outcome["result"])
            expect(_rendering_requirements(spec), "render_tool_result", outcome["result"], wanted, rendered)


def _marks(scenario: Scenario) -> list[pytest.MarkDecorator]:
    """What the scenario can be blamed on, and the table rows its expectation is rendered from."""
    return [
        requirement(*checks(_SPEC, scenario)),
        *(pytest.mark.reaches(table, index) for table, index in reaches(_SPEC, scenario)),
    ]


# --------------------------------------------------------------------------- every scenario


def _one_scenario(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    return plan_runs(spec, params["scenario"], folder)


@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, id=s.name, marks=_marks(s)) for s in product_scenarios(_SPEC, PRODUCT)],
)
@plays(PRODUCT, _one_scenario)
def test_scenario(adapter: Adapter, claim: Claim, played: Played, spec: Spec, scenario: Scenario) -> None:
    """Played on real pipes, the scenario gives exactly the outcome the spec renders for it."""
    _driver(claim)
    played(lambda planned, outcomes: _check(adapter, spec, planned, outcomes))


# --------------------------------------------------------------------------- concurrency


def _one_batch(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    members = overlapping(batches(spec, PRODUCT)[params["batch"]], folder)
    return [run for s in members for run in plan_runs(spec, s, folder)]


@pytest.mark.parametrize(
    "batch",
    [
        pytest.param(name, id=name, marks=requirement(*(r for s in members for r in checks(_SPEC, s))))
        for name, members in sorted(batches(_SPEC, PRODUCT).items())
    ],
)
@requirement("CC-042", "CC-024", "CC-025", "CC-027")
@plays(PRODUCT, _one_batch)
def test_concurrent_runs_share_nothing(adapter: Adapter, claim: Claim, played: Played, spec: Spec, batch: str) -> None:
    """The scenarios of one batch in one call: the fakes overlap in time, and each run still gives
    exactly its own outcome (its own permission facts, cancellation, exit, mode and environment)."""
    _driver(claim)
    members = batches(spec, PRODUCT)[batch]
    assert len(members) >= 6, f"batch {batch} has {len(members)} scenarios; the isolation check needs at least six"

    def check(planned: list[PlannedRun], outcomes: list[Json]) -> None:
        _check(adapter, spec, planned, outcomes, overlap=True)
        for run in planned:
            _expect_flags(run, [(MODE_FLAG, run.run["mode"])], ("CC-042",))

    played(check)


# --------------------------------------------------------------------------- what the provider sends


def _expect_flags(run: PlannedRun, wanted: list[tuple[str, str]], requirements: tuple[str, ...]) -> None:
    """The CLI got each flag with its value (the provider appends them to the RUN's argv)."""
    flags = sent_flags(run)
    got = {name: flag_value(flags, name) for name, _ in wanted}
    if got != dict(wanted):
        raise Violation(
            requirements,
            operation="run_claude_code",
            input={"runs": [run.run]},
            expected=dict(wanted),
            actual=got,
            sections={"arguments the CLI got": " ".join(flags)},
        )


def _claimed_release(adapter: Adapter, spec: Spec) -> str:
    """The Agent SDK release the provider claims (a release verified on release day included), or
    the one the spec stands at when it claims none."""
    claimed = adapter.declaration.get("providers", {}).get(PRODUCT)
    return str(claimed or spec.areas[PRODUCT].version)


def _expect_sdk_environment(run: PlannedRun, release: str) -> None:
    """The SDK's own variables reached the CLI, its version being the claimed release (table sdk_wire,
    row sdk-version-variable); whatever else the SDK adds is its own and not read."""
    env = run.recorded()[0]["env"]
    wanted = {**SDK_VARIABLES, "CLAUDE_AGENT_SDK_VERSION": release}
    got = {name: env.get(name) for name in wanted}
    if got != wanted:
        raise Violation(
            ("CC-044",),
            operation="run_claude_code",
            input={"runs": [run.run]},
            expected=wanted,
            actual=got,
            detail="the Agent SDK at the claimed release sets these variables for the CLI it starts",
        )


def _plain_success(spec: Spec) -> Scenario:
    """A scenario of an ordinary successful run with nothing mode-specific on the wire: no control
    request (a real CLI sends can_use_tool only when the provider installed the callback, never in
    bypassPermissions, CC-026), no run settings of its own. Any mode may run it."""
    for scenario in product_scenarios(spec, PRODUCT):
        outs = [a["out"] for a in scenario.actions if isinstance(a.get("out"), dict)]
        if (
            not scenario.run
            and scenario.expect.get("result", {}).get("stopReason") == "completed"
            and "dispose" not in scenario.expect
            and not any(o.get("type") == "control_request" for o in outs)
        ):
            return scenario
    raise LookupError(f"no plain successful scenario in {PRODUCT}'s scenario file")


_TASK = [
    {"type": "text", "text": "First part. "},
    {"type": "text", "text": " \t"},
    {"type": "text", "text": "Last."},
]


def _every_mode(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    """The plain successful run once per permission mode, with a task of three text blocks."""
    template = _plain_success(spec)
    planned = []
    for mode in spec.vocabulary("claude-code.permission_mode").values:
        [run] = plan_runs(spec, template, folder / str(mode))
        run.run.update(mode=mode, task=_TASK)
        planned.append(run)
    return planned


# The rows of table sdk_wire this test reads: the prompt tool, either flag form, the SDK's variables.
_READ_SDK_WIRE = ("permission-prompt-tool", "valued-flag-form", "sdk-version-variable")


@requirement("CC-042", "CC-044")
@pytest.mark.reaches(
    "claude-code.sdk_wire",
    *(i for i, r in enumerate(_SPEC.table(PRODUCT, "sdk_wire").rows) if r["name"] in _READ_SDK_WIRE),
)
@plays(PRODUCT, _every_mode)
def test_the_cli_gets_its_run_settings(adapter: Adapter, claim: Claim, played: Played, spec: Spec) -> None:
    """One run per permission mode, in one call: each CLI gets the stream-json flags and its own
    mode, runs in the parent's directory with the run's environment, receives the initialize
    control request and then the task's text as the one user message."""
    _driver(claim)

    def check(planned: list[PlannedRun], outcomes: list[Json]) -> None:
        _check(adapter, spec, planned, outcomes)  # also: the CLI's command, directory and environment
        for run in planned:
            prompt_tool = [] if run.run["mode"] == BYPASS else [PROMPT_TOOL_FLAG]  # canUseTool is set (CC-026)
            _expect_flags(run, [*STREAM_JSON_FLAGS, (MODE_FLAG, run.run["mode"]), *prompt_tool], ("CC-044",))
            _expect_sdk_environment(run, _claimed_release(adapter, spec))
            frames = [line["stdin"] for line in run.recorded() if "stdin" in line]
            kinds = [
                f.get("request", {}).get("subtype") if f.get("type") == "control_request" else f.get("type")
                for f in frames
            ]
            got = {
                "--verbose": "--verbose" in sent_flags(run),
                "first frames": kinds[:2],
                "task": user_text(frames[1]) if frames[1:] else None,
            }
            task = "".join(b["text"] for b in _TASK)
            want = {"--verbose": True, "first frames": ["initialize", "user"], "task": task}
            sections = {"wire transcript": transcript(run.recorded())}
            expect(("CC-044",), "run_claude_code", {"runs": [run.run]}, want, got, sections=sections)

    played(check)


# --------------------------------------------------------------------------- stages of the rejections


def _staged_params() -> list[Any]:
    """One parameter per scenario whose start() or dispose() rejects, marked as reaching the row of
    table stages of each stage its rejections show."""
    stages = [r["stage"] for r in _SPEC.table(PRODUCT, "stages").rows]
    return [
        pytest.param(
            s,
            id=s.name,
            marks=pytest.mark.reaches(f"{PRODUCT}.stages", *sorted(stages.index(x) for x in s.rejected_stages)),
        )
        for s in product_scenarios(_SPEC, PRODUCT)
        if s.rejected_stages
    ]


@requirement("CC-002")
@pytest.mark.parametrize("scenario", _staged_params())
@plays(PRODUCT, _one_scenario)
def test_rejection_names_the_stage(claim: Claim, played: Played, scenario: Scenario) -> None:
    """Each scenario whose start() or dispose() rejects, at the stages only rejections show (the
    others: test_failure_line_names_the_stage of the claude_code tier): each line names the stage
    the spec renders, with a category of its row. Only that is judged here; check_runs blames the rest."""
    _driver(claim)
    played(lambda planned, outcomes: check_stages(_SPEC, planned, outcomes, ("CC-002",)))


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
