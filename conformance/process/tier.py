"""The process tier of both products through one interface.

``product_scenarios(spec, product)`` is a product's scenarios as they run: the scenario file's,
each ``for_each_row`` template expanded once per row of its table, and those the product layer
generates from the spec. ``plan_runs(spec, scenario, folder)`` turns one scenario into the RUNs
of one call, each with canaries planted in its working directory, its environment and its task,
and with the record its fake writes. The checks every product shares are in
conformance/process/checks.py.

What differs stays in the product layers (conformance/process/claude_code.py,
conformance/process/codex.py): the scenarios a product generates, how its expected outcomes are
rendered, and what its provider must have written on the wire.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conformance.process import claude_code as claude_code_process
from conformance.process import codex as codex_process
from conformance.process.blame import Problem
from conformance.process.calls import call_runs
from conformance.process.scenarios import (
    CANARY,
    PlannedRun,
    Scenario,
    build_run,
    load_scenarios,
    scenario_file,
    substitute,
)
from conformance.spec import Spec

Json = Any
Allowed = dict[str, list[Json]]
Advised = dict[str, list[tuple[Json, tuple[str, ...]]]]  # per part: allowed options leaving SHOULDs unmet

# A concurrent call's fakes wait (at most this long) until all of them started, so that they overlap.
PEERS_WITHIN_MS = 30_000
# The interpreter the fakes run on adds this when the environment names no locale (PEP 538).
COERCED_LOCALE = "LC_CTYPE"


class ProductLayer(Protocol):
    """What a product module (conformance/process/claude_code.py, conformance/process/codex.py) adds."""

    def generated_scenarios(self, spec: Spec) -> list[Scenario]:
        """Scenarios made from the spec's data rather than written in the scenario file."""

    def complete_row(self, spec: Spec, table: str, row: Json, expect: Json) -> None:
        """Complete a ``for_each_row`` template's expectation with what the row implies."""

    def allowed_outcomes(self, spec: Spec, scenario: Scenario, run: Json) -> Allowed:
        """Each outcome part (start, result, dispose) as the spec renders it, with its allowed variants."""

    def advised_outcomes(self, spec: Spec, scenario: Scenario, run: Json) -> Advised:
        """The allowed outcome parts that leave a SHOULD unmet, with its IDs."""

    def protocol_problems(self, spec: Spec, planned: PlannedRun, record: list[Json]) -> list[Problem]:
        """Everything the provider wrote on the product's wire that the spec does not allow."""


@dataclass(frozen=True)
class Tier:
    """What the shared machinery needs to know of one product."""

    layer: ProductLayer
    operation: str
    credential: str  # the product's API key variable, planted as a canary with this prefix:
    credential_prefix: str
    label_variable: str  # each run's identity in its own environment (a scenario may have the fake echo it)
    # Whether the provider starts the product with exactly the RUN's argv and environment (Codex,
    # CDX-052), or appends its own flags and SDK variables (Claude Code, CC-044).
    exact_launch: bool


TIERS: dict[str, Tier] = {
    "claude-code": Tier(claude_code_process, "run_claude_code", "ANTHROPIC_API_KEY", "sk-ant-", "RUN_LABEL", False),
    "codex": Tier(codex_process, "run_codex", "OPENAI_API_KEY", "sk-", "CODEX_FAKE_COPY", True),
}


# --------------------------------------------------------------------------- scenarios

_SCENARIOS: dict[tuple[int, str], list[Scenario]] = {}


def product_scenarios(spec: Spec, product: str) -> list[Scenario]:
    """The product's scenarios as they run (file, expanded templates, generated), once per spec."""
    key = (id(spec), product)
    if key not in _SCENARIOS:
        found: list[Scenario] = []
        for scenario in load_scenarios(spec, scenario_file(product)):
            found += expand(spec, scenario) if scenario.for_each_row else [scenario]
        _SCENARIOS[key] = [*found, *TIERS[product].layer.generated_scenarios(spec)]
    return _SCENARIOS[key]


def expand(spec: Spec, scenario: Scenario) -> list[Scenario]:
    """A template once per row of its table ("$row.<column>"), named after the row's first column."""
    table = scenario.for_each_row
    assert table is not None
    out = []
    for index, row in enumerate(spec.table(scenario.product, table).rows):
        expect = substitute(scenario.expect, {"row": row})
        TIERS[scenario.product].layer.complete_row(spec, table, row, expect)
        out.append(
            dataclasses.replace(
                scenario,
                name=f"{scenario.name}-{next(iter(row.values()))}",
                actions=substitute(scenario.actions, {"row": row}),
                expect=expect,
                for_each_row=table,
                row=index,
            )
        )
    return out


def batches(spec: Spec, product: str) -> dict[str, list[Scenario]]:
    """The scenarios that also run together in one call, by batch name."""
    found: dict[str, list[Scenario]] = {}
    for scenario in product_scenarios(spec, product):
        if scenario.batch:
            found.setdefault(scenario.batch, []).append(scenario)
    return found


def overlapping(scenarios: list[Scenario], folder: Path) -> list[Scenario]:
    """The scenarios of one call, each fake first waiting until every fake of the call has started
    (a barrier in ``folder``, bounded by PEERS_WITHIN_MS), so that they overlap in time however
    busy the machine is and however slowly the provider starts them one after another."""
    count = sum(int(s.run.get("concurrent", 1)) for s in scenarios)
    peers = {"peers": {"dir": str(folder / "peers"), "count": count, "within_ms": PEERS_WITHIN_MS}}
    return [dataclasses.replace(s, actions=[peers, *s.actions]) for s in scenarios]


# --------------------------------------------------------------------------- runs


def plan_runs(spec: Spec, scenario: Scenario, folder: Path) -> list[PlannedRun]:
    """The runs of one call for ``scenario`` (``run.concurrent`` copies, cycling through the
    permission modes unless the scenario sets one), with canaries in every folder name (so in the
    working directory and the fake's path), the environment and the task."""
    tier = TIERS[scenario.product]
    copies = int(scenario.run.get("concurrent", 1))
    modes = [str(m) for m in spec.vocabulary(f"{scenario.product}.permission_mode").values]
    planned = []
    for copy in range(copies):
        mark = uuid.uuid4().hex[:8]
        where = folder / f"{CANARY}cwd_{mark}" / f"{scenario.name}-{copy}"
        run, record = build_run(scenario, where, spec.areas[scenario.product].wire)  # the claimed version's wire
        run["env"].update(
            {
                tier.label_variable: f"{scenario.name}-{copy}",
                "CANARY_VALUE": f"{CANARY}env_{mark}",
                tier.credential: f"{tier.credential_prefix}{CANARY}credential_{mark}",
            }
        )
        if "task" not in scenario.run:
            run["task"] = [{"type": "text", "text": f"{CANARY}task_{mark} Summarise the repository."}]
        if copies > 1 and "mode" not in scenario.run:
            run["mode"] = modes[copy % len(modes)]
        planned.append(PlannedRun(scenario, run, record))
    return planned


def call(adapter: Any, planned: list[PlannedRun]) -> list[Json]:
    """The product's process operation on these runs, in one call, with a deadline and the survivor scan."""
    [operation] = {TIERS[p.scenario.product].operation for p in planned}
    return call_runs(adapter, operation, [p.run for p in planned])


def product_name(spec: Spec, product: str) -> str:
    """The product as the grammar and table canary_sites name it (diagnostic.products)."""
    [name] = [r["product"] for r in spec.table("diagnostic", "products").rows if r["area"] == product]
    return str(name)
