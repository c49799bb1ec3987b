"""The checks every product's process tier shares.

The outcome is one the spec allows (so its texts are sentences of the product's grammar carrying
no canary), nothing was spawned for a request refused at admission, the fake got the run's
directory and environment, and the runs of one call overlapped. ``check_runs`` raises one
Violation per call, blamed on what each difference shows (conformance/process/blame.py), with
the batch as input and each failing run's wire transcript both ways and stderr tail as its
sections; an accepted outcome that leaves a SHOULD unmet is reported as an advisory.
"""

from __future__ import annotations

import os
from typing import Any

from conformance.areas.diagnostic.text_blame import line_stages
from conformance.harness.processes import RUN_TOKEN_VARIABLE
from conformance.process.blame import Context, Problem, blamed, outcome_problems
from conformance.process.owners import OWNERS
from conformance.process.scenarios import PlannedRun, Scenario
from conformance.process.tier import COERCED_LOCALE, TIERS, product_name, product_scenarios
from conformance.spec import Spec
from conformance.verdict.advisories import advise
from conformance.verdict.blame import Violation, difference, dump

Json = Any


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


def check_stages(spec: Spec, planned: list[PlannedRun], outcomes: list[Json], rule: tuple[str, ...]) -> None:
    """Raise a Violation of ``rule`` (the product's "failures carry the stage of the failed
    operation") when a start() or dispose() rejection line names another stage than the spec
    renders for it, or a category its stages row does not list. Only the lines both texts have
    are compared: a rejection that is missing or extra, a line that is no failure line, and the
    other fields are check_runs's to blame."""
    product = planned[0].scenario.product
    categories = {r["stage"]: r["categories"] for r in spec.table(product, "stages").rows}
    problems = []
    for i, (run, outcome) in enumerate(zip(planned, outcomes, strict=True)):
        allowed = TIERS[product].layer.allowed_outcomes(spec, run.scenario, run.run)
        for part in ("start", "dispose"):
            got = _rejections(outcome.get(part) if isinstance(outcome, dict) else None)
            for want_text, got_text in zip(_rejections(allowed[part][0]), got, strict=False):
                pairs = zip(line_stages(want_text or ""), line_stages(got_text or ""), strict=False)
                for want, line in pairs:
                    if want is None or line is None or (line[0] == want[0] and line[1] in categories[want[0]]):
                        continue
                    message = f"a {part}() rejection line names stage {line[0]!r} and category {line[1]!r}"
                    problems.append((i, Problem(rule, f"{message}, not stage {want[0]!r}")))
    if problems:
        raise failure(spec, planned, outcomes, problems)


def _rejections(part: Json) -> list[str | None]:
    """The rejection text of a start() outcome, or of each dispose() call (None: it did not reject)."""
    calls = part if isinstance(part, list) else [part]
    return [c["rejected"] if isinstance(c, dict) and isinstance(c.get("rejected"), str) else None for c in calls]


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
