"""The process tier of both products through one interface.

``product_scenarios(spec, product)`` is a product's scenarios as they run: the scenario file's,
each ``for_each_row`` template expanded once per row of its table, and those the product layer
generates from the spec. ``plan_runs(spec, scenario, folder)`` turns one scenario into the RUNs
of one call, each with canaries planted in its working directory, its environment and its task,
and with the record its fake writes. The checks every product shares are here too: the outcome
is one the spec allows (so its texts are sentences of the product's grammar carrying no canary),
nothing was spawned for a request refused at admission, the fake got the run's directory and
environment, and the runs of one call overlapped. ``check_runs`` raises one Violation per call,
blamed on what each difference shows (conformance/process/blame.py), with the batch as input
and each failing run's wire transcript both ways and stderr tail as its sections.

What differs stays in the product layers (conformance/process/claude_code.py,
conformance/process/codex.py): the scenarios a product generates, how its expected outcomes are
rendered, and what its provider must have written on the wire.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conformance.harness.processes import RUN_TOKEN_VARIABLE
from conformance.process import claude_code as claude_code_process
from conformance.process import codex as codex_process
from conformance.process.blame import Context, Problem, blamed, outcome_problems
from conformance.process.calls import call_runs
from conformance.process.owners import OWNERS
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
from conformance.verdict.advisories import advise
from conformance.verdict.blame import Violation, difference, dump

Json = Any
Allowed = dict[str, list[Json]]
Advised = dict[str, list[tuple[Json, tuple[str, ...]]]]  # per part: allowed options leaving SHOULDs unmet

# A batch's runs wait this long before acting, so that the fakes of one call provably overlap.
OVERLAP_MS = 500
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


def overlapping(scenario: Scenario) -> Scenario:
    """The scenario with a pause first, so that its fake lives until every fake of the call started."""
    return dataclasses.replace(scenario, actions=[{"sleep_ms": OVERLAP_MS}, *scenario.actions])


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
        run, record = build_run(scenario, folder / f"{CANARY}cwd_{mark}" / f"{scenario.name}-{copy}")
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


# --------------------------------------------------------------------------- checks every product shares


def context(spec: Spec, planned: PlannedRun, record: list[Json]) -> Context:
    """What the diagnosis of one run knows: what its scenario covers, what was planted (environment
    values, task texts, working directory, run token) and what the fake wrote."""
    run = planned.run
    planted = [*run["env"].values(), *(b.get("text", "") for b in run["task"]), run["cwd"] or ""]
    planted += [line["token"] for line in record[:1] if line.get("token")]
    return Context(
        spec,
        planned.scenario.product,
        covers=tuple(planned.scenario.covers),
        planted=[str(p) for p in planted],
        stderr="".join(line["stderr"] for line in record if "stderr" in line),
        stdout="".join(line["sent"] for line in record if "sent" in line),
    )


def run_problems(spec: Spec, planned: PlannedRun, outcome: Json) -> list[Problem]:
    """Everything wrong with one run's outcome and with what its fake saw, each with its blame."""
    tier = TIERS[planned.scenario.product]
    record = planned.recorded()
    startup = tuple(spec.table(planned.scenario.product, "startup_rejections").requirements)
    allowed = tier.layer.allowed_outcomes(spec, planned.scenario, planned.run)
    problems = outcome_problems(context(spec, planned, record), allowed, outcome, startup)
    if record and refused_before_spawn(spec, planned.scenario):
        problems.append(Problem(startup, "a process was started for a request refused before any process starts"))
    if record:
        problems += [Problem(OWNERS[planned.scenario.product].launch, p) for p in launch_problems(planned, record)]
    problems += tier.layer.protocol_problems(spec, planned, record)
    return problems


def expected_outcome(spec: Spec, planned: PlannedRun) -> Json:
    """The outcome the spec renders for a run: each part, or the list of its allowed variants."""
    allowed = TIERS[planned.scenario.product].layer.allowed_outcomes(spec, planned.scenario, planned.run)
    return {key: options[0] if len(options) == 1 else {"one of": options} for key, options in allowed.items()}


TRANSCRIPT_LINES = 80  # the end of a long transcript is shown; the record holds it whole
STDERR_TAIL = 2000  # characters


def transcript(record: list[Json]) -> str:
    """The wire both ways, as the fake recorded it: what it received on stdin and wrote on stdout."""
    if not record:
        return "(the product was never started)"
    lines = []
    for line in record:
        if "stdin" in line:
            lines.append(f"fake received: {dump(line['stdin'])}")
        elif "sent" in line:
            lines.extend(f"fake sent:     {part}" for part in line["sent"].splitlines() or [""])
        elif "end" in line:
            lines.append(f"fake ended:    {dump(line['end'])}")
    shown = lines[-TRANSCRIPT_LINES:]
    skipped = len(lines) - len(shown)
    return "\n".join(([f"({skipped} earlier line(s) left out)"] if skipped else []) + shown)


def stderr_tail(record: list[Json]) -> str:
    """The end of what the product wrote to its stderr."""
    text = "".join(line["stderr"] for line in record if "stderr" in line)
    return text[-STDERR_TAIL:] if text else "(the product wrote nothing to stderr)"


def failure(
    spec: Spec, planned: list[PlannedRun], outcomes: list[Json], problems: list[tuple[int, Problem]]
) -> Violation:
    """One Violation for the runs of a call that went wrong: blamed on exactly what their problems
    show, with the batch as input, the expected and actual outcomes, each failing run's wire
    transcript both ways and its stderr tail."""
    failing = sorted({index for index, _ in problems})
    single = len(planned) == 1
    sections: dict[str, str] = {}
    for index in failing:
        run = planned[index]
        name = "" if single else f" of run {index} ({run.scenario.name}, mode {run.run['mode']})"
        record = run.recorded()
        about = " ".join(run.scenario.description.split())
        sections[f"scenario{name}"] = f"{run.scenario.name} ({run.scenario.where}): {about}"
        sections[f"wire transcript{name}"] = transcript(record)
        sections[f"stderr tail{name}"] = stderr_tail(record)
    expected = [expected_outcome(spec, planned[i]) for i in failing]
    actual = [outcomes[i] for i in failing]
    want, got = (expected[0], actual[0]) if len(failing) == 1 else (expected, actual)
    lines = [f"{'' if single else f'run {i}: '}{p.message} [{', '.join(p.requirements)}]" for i, p in problems]
    shown = [p.values for _, p in problems if p.values is not None]
    if _same_outcome(want, got) and shown:
        # The outcome is as the spec renders it: what differs is on the wire, so show that.
        sections = {"outcome (as the spec renders it)": dump(got), **sections}
        want, got = (shown[0][0], shown[0][1]) if len(shown) == 1 else ([w for w, _ in shown], [g for _, g in shown])
        lines.append("where: not in the outcome, which is as the spec renders it, but in what the provider wrote")
    return Violation(
        blamed(p for _, p in problems),
        operation=TIERS[planned[0].scenario.product].operation,
        input={"runs": [p.run for p in planned]},
        expected=want,
        actual=got,
        detail="\n".join([*lines, *(f"where: {d}" for d in [difference(want, got)] if d)]),
        sections=sections,
    )


def _same_outcome(want: Json, got: Json) -> bool:
    """Whether an actual outcome is one the expectation (a part, or its "one of" variants) allows."""
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_same_outcome(w, g) for w, g in zip(want, got, strict=True))
    if not (isinstance(want, dict) and isinstance(got, dict)) or want.keys() != got.keys():
        return bool(want == got)
    return all(
        got[key] in part["one of"] if isinstance(part, dict) and set(part) == {"one of"} else got[key] == part
        for key, part in want.items()
    )


def check_runs(spec: Spec, planned: list[PlannedRun], outcomes: list[Json], *, overlap: bool = False) -> None:
    """Raise one Violation for the runs of a call whose outcome or wire the spec does not allow."""
    problems = [
        (i, p)
        for i, (run, outcome) in enumerate(zip(planned, outcomes, strict=True))
        for p in run_problems(spec, run, outcome)
    ]
    if overlap:
        concurrency = OWNERS[planned[0].scenario.product].concurrency
        problems += [(0, Problem(concurrency, p)) for p in overlap_problems(planned)]
    if problems:
        raise failure(spec, planned, outcomes, problems)
    for run, outcome in zip(planned, outcomes, strict=True):
        advise_run(spec, run, outcome)


def advise_run(spec: Spec, planned: PlannedRun, outcome: Json) -> None:
    """Report each part of an accepted outcome that leaves a SHOULD unmet (never a failure)."""
    tier = TIERS[planned.scenario.product]
    for part, options in tier.layer.advised_outcomes(spec, planned.scenario, planned.run).items():
        for option, ids in options:
            if outcome.get(part) == option:
                advise(
                    ids,
                    operation=tier.operation,
                    input={"runs": [planned.run]},
                    expected=expected_outcome(spec, planned)[part],
                    actual=option,
                    detail=f"scenario {planned.scenario.name}: its {part} is allowed but leaves {', '.join(ids)} unmet",
                )


def product_name(spec: Spec, product: str) -> str:
    """The product as the grammar and table canary_sites name it (diagnostic.products)."""
    [name] = [r["product"] for r in spec.table("diagnostic", "products").rows if r["area"] == product]
    return str(name)


def refused_before_spawn(spec: Spec, scenario: Scenario) -> bool:
    """Whether start() must reject before any product process exists: an unusable working directory,
    a command that is not the fake, or a row of table startup_rejections ordered before startup."""
    start = scenario.expect["start"]
    if start == "published":
        return False
    if scenario.run.get("cwd", "default") != "default" or scenario.run.get("executable", "fake") != "fake":
        return True
    rows = spec.table(scenario.product, "startup_rejections").rows
    index = start["rejected"].get("plain", start["rejected"].get("row"))
    return index is not None and bool(rows[index]["order"] < max(r["order"] for r in rows))


def launch_problems(planned: PlannedRun, record: list[Json]) -> list[str]:
    """The fake was started with the run's command, in its working directory, with its environment
    and its run token (exactly, or with the provider's own additions where the product has them)."""
    tier = TIERS[planned.scenario.product]
    run, first = planned.run, record[0]
    problems = []
    wanted = run["argv"][2:]  # the interpreter and -I are not in the fake's own argv
    got = first["argv"] if tier.exact_launch else first["argv"][: len(wanted)]
    if got != wanted:
        problems.append(f"the product got the arguments {first['argv']}, not {wanted}")
    if os.path.realpath(first["cwd"]) != os.path.realpath(run["cwd"]):
        problems.append(f"the product ran in {first['cwd']}, not {run['cwd']}")
    env = dict(first["env"])
    if first.get("token") is None or env.pop(RUN_TOKEN_VARIABLE, None) != first["token"]:
        problems.append("the product did not get the run's token (call_runs adds it to the run's environment)")
    if COERCED_LOCALE not in run["env"]:
        env.pop(COERCED_LOCALE, None)
    missing = sorted(k for k in run["env"] if k not in env)
    changed = sorted(k for k in run["env"] if k in env and env[k] != run["env"][k])
    added = sorted(set(env) - set(run["env"])) if tier.exact_launch else []
    if missing or changed or added:
        problems.append(f"the product's environment differs: added {added}, missing {missing}, changed {changed}")
    return problems


def overlap_problems(planned: list[PlannedRun]) -> list[str]:
    """The runs of one call overlapped: every fake started, and none ended on its own (its ending
    line) before the last one started. A fake its provider killed writes no ending line, and its
    record cannot say when it died, so it bounds only the start."""
    records = [p.recorded() for p in planned]
    if not all(records):
        return [f"{sum(1 for r in records if not r)} of {len(records)} fakes never started"]
    last_start = max(r[0]["t"] for r in records)
    ended = [line["t"] for r in records for line in r if "end" in line]
    if ended and min(ended) <= last_start:
        return ["the runs did not overlap: a fake ended before another one started"]
    return []


def canary_site_problems(spec: Spec, product: str) -> list[str]:
    """The rows of canary_sites planted via the product's operation are exactly the sites its scenarios plant."""
    operation, name = TIERS[product].operation, product_name(spec, product)
    rows = spec.table("redaction", "canary_sites").rows
    sites = {r["site"] for r in rows if r["product"] == name and operation in r["plant_via"]}
    planted = {site for s in product_scenarios(spec, product) for site in s.plants}
    problems = []
    if sites - planted:
        problems.append(f"no {name} scenario plants a canary at {sorted(sites - planted)}")
    if planted - sites:
        problems.append(f"scenarios plant at sites that are not {operation} sites: {sorted(planted - sites)}")
    return problems
