"""Tier 3, Codex: run_codex drives a fake app-server (fixtures/fakes/fake_codex.py) over real pipes,
one scenario of fixtures/scenarios/codex.yaml per test, and must report what the spec says.

Every call goes through conformance.processes.call_runs: a deadline (a hung adapter fails its
test) and a scan for survivors (no process of a run may outlive its dispose() or start()
rejection). Every run plants canaries in its working directory, its environment (CANARY_VALUE,
OPENAI_API_KEY) and its task; scenarios make the fake carry them (and their own "SECRET" and
"/private/" values) back in frames and stderr, and no text may contain any of them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import Adapter
from conformance.codex_process import ProcessOracle, overlap_problems, records, substitute
from conformance.processes import RUN_TOKEN_VARIABLE, call_runs
from conformance.scenarios import Scenario, read_record
from conformance.spec import load_spec

Json = Any
Claim = Callable[[str, str], None]
requirement = pytest.mark.requirement

_SPEC = load_spec()
ORACLE = ProcessOracle(_SPEC)
SCENARIOS = ORACLE.scenarios()
DEADLINE = 20.0
# Values that no sentence of the Codex grammar contains: the scenarios' own secrets, the fault
# canary of an injected teardown failure ("FAULT-<token>"), and what each run plants.
MARKERS = ("secret", "/private/", "fault-")
# Canary sites that run_codex cannot plant: the operation's cancel carries no reason.


@pytest.fixture
def run_codex(adapter: Adapter, claim: Claim) -> Callable[[list[Json]], list[Json]]:
    """run_codex of the adapter, with a deadline and the survivor scan, once it claims the Codex driver."""
    claim("process_drivers", "codex")
    return lambda runs: call_runs(adapter, "run_codex", runs, DEADLINE)


def _planted(scenario: Scenario, folder: Path) -> list[tuple[Json, Path]]:
    """The scenario's runs, each with canaries in its folder (so its cwd), environment and task."""
    built = ORACLE.runs(scenario, folder / f"SECRET_{uuid.uuid4().hex[:8]}")
    for run, _ in built:
        mark = uuid.uuid4().hex[:8]
        run["env"].update({"CANARY_VALUE": f"SECRET_{mark}_env_value", "OPENAI_API_KEY": f"sk-SECRET-{mark}"})
        if "task" not in scenario.run:
            run["task"] = [{"type": "text", "text": f"Summarise the repository. SECRET_{mark}_task"}]
    return built


def _leaks(outcome: Json, run: Json, record: list[Json]) -> list[str]:
    texts = [outcome["start"].get("rejected", "")]
    texts += [(outcome["result"] or {}).get("diagnostic", "")]
    texts += [s.get("rejected", "") for s in outcome["dispose"]]
    canaries = [*MARKERS, *run["env"].values(), *(b.get("text", "") for b in run["task"])]
    canaries += [run["cwd"] or "", *(r["token"] for r in record[:1] if r.get("token"))]
    return [
        f"{canary!r} leaked into {text!r}"
        for text in texts
        for canary in canaries
        if len(canary) >= 4 and canary.lower() in text.lower()
    ]


def _before_any_process(scenario: Scenario) -> bool:
    """Whether start() must reject before anything is spawned: admission and cancellation (rows of
    table startup_rejections before order 5), an unusable working directory, a failing spawn."""
    start = scenario.expect["start"]
    if start != "published" and "plain" in start["rejected"]:
        return bool(ORACLE.startup_rows[start["rejected"]["plain"]]["order"] < 5)
    return bool(scenario.run.get("cwd", "default") != "default" or scenario.run.get("executable", "fake") != "fake")


def _problems(scenario: Scenario, run: Json, outcome: Json, record: list[Json]) -> list[str]:
    expect = substitute(scenario.expect, {"env": run["env"]})
    problems = []
    for key, allowed in (
        ("start", ORACLE.start(expect["start"])),
        ("result", ORACLE.result(expect.get("result"), run["mode"])),
        ("dispose", ORACLE.dispose(expect.get("dispose"))),
    ):
        if outcome[key] not in allowed:
            shown = "\n    or ".join(json.dumps(a, ensure_ascii=False) for a in allowed)
            problems.append(
                f"{key}: got\n    {json.dumps(outcome[key], ensure_ascii=False)}\n  the spec says\n    {shown}"
            )
    problems += ORACLE.text_problems(outcome)
    problems += _leaks(outcome, run, record)
    if record and _before_any_process(scenario):
        problems.append("a process was started, but this rejection comes before any process (CDX-059, CDX-060)")
    if record:
        problems += ORACLE.process_problems(run, record)
        problems += ORACLE.reply_problems(scenario, record)
        if record[0].get("token") is None or record[0]["env"].get(RUN_TOKEN_VARIABLE) != record[0]["token"]:
            problems.append("the app-server did not get the run's environment")
    if "frames" in expect:
        problems += ORACLE.frame_problems(scenario, run, record)
    return problems


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, id=s.name, marks=requirement("CDX-072", "RED-001", "RED-002", "RED-008", *s.covers))
        for s in SCENARIOS
    ],
)
def test_scenario(run_codex: Callable[[list[Json]], list[Json]], scenario: Scenario, tmp_path: Path) -> None:
    built = _planted(scenario, tmp_path)
    outcomes = run_codex([run for run, _ in built])
    problems = []
    for index, ((run, _), outcome, record) in enumerate(zip(built, outcomes, records(built), strict=True)):
        where = f"run {index} ({run['mode']})" if len(built) > 1 else "the run"
        problems += [f"{where}: {p}" for p in _problems(scenario, run, outcome, record)]
    if len(built) > 1:
        problems += overlap_problems(records(built))
    assert not problems, f"scenario {scenario.name} ({scenario.where}): {scenario.description}\n" + "\n".join(problems)


@requirement("RED-008")
def test_every_codex_canary_site_is_planted() -> None:
    """The canary_sites rows planted via run_codex are the coverage list: some scenario plants each."""
    sites = {
        row["site"]
        for row in _SPEC.table("redaction", "canary_sites").rows
        if row["product"] == ORACLE.codex.product and "run_codex" in row["plant_via"]
    }
    planted = {site for scenario in SCENARIOS for site in scenario.plants}
    assert planted <= sites, f"scenarios plant at sites that are not Codex sites: {sorted(planted - sites)}"
    missing = sites - planted
    assert not missing, f"no Codex scenario plants a canary at {sorted(missing)}"


@pytest.mark.parametrize("batch", sorted({s.batch for s in SCENARIOS if s.batch}))
@requirement("CDX-071", "CDX-016", "CDX-070")
def test_a_batch_in_one_call(run_codex: Callable[[list[Json]], list[Json]], batch: str, tmp_path: Path) -> None:
    """Different scenarios overlapping in one call (modes, facts, exits, a dispose() before
    settlement that cancels only its own run): each gives exactly its own outcome."""
    members = [s for s in SCENARIOS if s.batch == batch]
    assert len(members) >= 6, f"batch {batch} has {len(members)} scenarios; the isolation check needs at least six"
    planned = [(s, built) for s in members for built in _planted(s, tmp_path / s.name)]
    outcomes = run_codex([run for _, (run, _) in planned])
    problems = []
    for (scenario, (run, record)), outcome in zip(planned, outcomes, strict=True):
        problems += [f"{scenario.name}: {p}" for p in _problems(scenario, run, outcome, read_record(record))]
    assert not problems, "\n".join(problems)


@requirement("CDX-054", "CDX-071")
def test_every_mode_in_one_call(run_codex: Callable[[list[Json]], list[Json]], tmp_path: Path) -> None:
    """The ordinary run in every permission mode at once: each thread/start carries its own mode's fields."""
    [scenario] = [s for s in SCENARIOS if s.name == "completed-answer"]
    built = []
    for index, mode in enumerate(ORACLE.modes):
        [(run, record)] = _planted(scenario, tmp_path / f"mode-{index}")
        built.append(({**run, "mode": mode}, record))
    outcomes = run_codex([run for run, _ in built])
    problems = []
    for (run, _), outcome, logged in zip(built, outcomes, records(built), strict=True):
        problems += [f"{run['mode']}: {p}" for p in _problems(scenario, run, outcome, logged)]
    problems += overlap_problems(records(built))
    assert not problems, "\n".join(problems)
