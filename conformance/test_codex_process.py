"""Tier 3, Codex: run_codex drives a fake app-server (fixtures/fakes/fake_codex.py) over real pipes,
one scenario of fixtures/scenarios/codex.yaml per test, and must report what the spec says.

Every call goes through conformance.process.calls.call_runs: a deadline (a hung adapter fails its
test) and a scan for survivors (no process of a run may outlive its dispose() or start()
rejection). Every run plants canaries in its working directory, its environment (CANARY_VALUE,
OPENAI_API_KEY) and its task; scenarios make the fake carry them (and their own "SECRET" and
"/private/" values) back in frames and stderr, and no text may contain any of them. Planning
and the checks both products share are conformance.process.tier.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.plugin import contract
from conformance.process.ahead import Played, plays
from conformance.process.checks import canary_site_problems, check_runs, check_stages
from conformance.process.marks import checks, reaches
from conformance.process.scenarios import PlannedRun, Scenario
from conformance.process.tier import batches, plan_runs, product_scenarios
from conformance.spec import Spec
from conformance.verdict.reach import row_params

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"run_codex"})

Claim = Callable[[str, str], None]
requirement = pytest.mark.requirement

PRODUCT = "codex"
_SPEC = contract()  # the spec at the claimed product versions
SCENARIOS = product_scenarios(_SPEC, PRODUCT)


def _marks(scenario: Scenario) -> list[pytest.MarkDecorator]:
    """What the scenario can be blamed on, and the table rows its expectation is rendered from."""
    return [
        requirement(*checks(_SPEC, scenario)),
        *(pytest.mark.reaches(table, index) for table, index in reaches(_SPEC, scenario)),
    ]


def _one_scenario(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    return plan_runs(spec, params["scenario"], folder)


def _one_batch(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    return [run for s in batches(spec, PRODUCT)[params["batch"]] for run in plan_runs(spec, s, folder)]


def _every_mode(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    """The ordinary run once in every permission mode."""
    [scenario] = [s for s in product_scenarios(spec, PRODUCT) if s.name == "completed-answer"]
    planned = []
    for mode in spec.vocabulary(f"{PRODUCT}.permission_mode").values:
        [run] = plan_runs(spec, scenario, folder / str(mode))
        run.run["mode"] = mode
        planned.append(run)
    return planned


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s.name, marks=_marks(s)) for s in SCENARIOS])
@plays(PRODUCT, _one_scenario)
def test_scenario(claim: Claim, played: Played, scenario: Scenario) -> None:
    """Played on real pipes, the scenario gives exactly the outcome and the wire the spec renders."""
    claim("process_drivers", PRODUCT)
    played(lambda planned, outcomes: check_runs(_SPEC, planned, outcomes, overlap=len(planned) > 1))


@requirement("RED-008")
@pytest.mark.claims("process_drivers", PRODUCT)  # a statement about this tier's inputs: of a claimed driver only
def test_every_codex_canary_site_is_planted() -> None:
    """The canary_sites rows planted via run_codex are the coverage list: some scenario plants each."""
    problems = canary_site_problems(_SPEC, PRODUCT)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize(
    "batch",
    [
        pytest.param(name, id=name, marks=requirement(*(r for s in members for r in checks(_SPEC, s))))
        for name, members in sorted(batches(_SPEC, PRODUCT).items())
    ],
)
@requirement("CDX-071", "CDX-016", "CDX-070")
@plays(PRODUCT, _one_batch)
def test_a_batch_in_one_call(claim: Claim, played: Played, batch: str) -> None:
    """Different scenarios overlapping in one call (modes, facts, exits, a dispose() before
    settlement that cancels only its own run): each gives exactly its own outcome."""
    claim("process_drivers", PRODUCT)
    members = batches(_SPEC, PRODUCT)[batch]
    assert len(members) >= 6, f"batch {batch} has {len(members)} scenarios; the isolation check needs at least six"
    played(lambda planned, outcomes: check_runs(_SPEC, planned, outcomes))


@requirement("CDX-054", "CDX-071")
@pytest.mark.reaches("codex.mode_fields", *range(len(_SPEC.table(PRODUCT, "mode_fields").rows)))
@plays(PRODUCT, _every_mode)
def test_every_mode_in_one_call(claim: Claim, played: Played) -> None:
    """The ordinary run in every permission mode at once: each thread/start carries its own mode's fields."""
    claim("process_drivers", PRODUCT)
    played(lambda planned, outcomes: check_runs(_SPEC, planned, outcomes, overlap=True))


def _staged(spec: Spec, stage: str) -> Scenario:
    """The first scenario (in the file's order) whose start() or dispose() rejects at ``stage``."""
    found = [s for s in product_scenarios(spec, PRODUCT) if stage in s.rejected_stages]
    assert found, f"no {PRODUCT} scenario rejects start() or dispose() at stage {stage}"
    return found[0]


def _one_staged(spec: Spec, params: dict[str, Any], folder: Path) -> list[PlannedRun]:
    return plan_runs(spec, _staged(spec, params["row"]["stage"]), folder)


@requirement("CDX-010")
@pytest.mark.parametrize(
    "row", row_params(_SPEC, PRODUCT, "stages", where=lambda r: "run-result" not in r["surfaces_in"])
)
@plays(PRODUCT, _one_staged)
def test_rejection_names_the_stage(claim: Claim, played: Played, row: dict[str, Any]) -> None:
    """Each stage only a start() or dispose() rejection shows (the others: test_codex_tables),
    played with the first scenario failing there: each line names the stage the spec renders."""
    claim("process_drivers", PRODUCT)
    played(lambda planned, outcomes: check_stages(_SPEC, planned, outcomes, ("CDX-010",)))
