"""What a process scenario checks and which spec table rows it reaches, read off its expectation.

A scenario test is marked with every requirement its diagnosis (conformance/process/blame.py)
can blame — the scenario's ``covers``, the hygiene and leak rules every run is checked for, and
the owners of the facts its expectation was rendered from — so that ``--requirement`` selects
the tests that can catch a requirement. It is marked ``reaches`` (conformance/verdict/reach.py) with the
rows its expectation is rendered from: the startup_rejections row of a rejected start(), the
stages row of every failure line, the client_frames rows it checks and the mode_fields row of
its mode, its variants row, the server_request_replies row of each server request it sends and
the permission_facts row of the fact it expects. It also reaches the redaction.canary_sites row of
every site its ``plants`` declares: the scenario carries a canary there, and every run is checked
for a canary in any text (process_tier.run_problems); and the redaction.structured_inputs rows
whose read those rows exercise (conformance/verdict/structured_reads.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.areas.claude_code.oracle import decide
from conformance.process.blame import Context, category_owner
from conformance.process.claude_code import CONTROL_SUBTYPES
from conformance.process.codex import OBSERVE_EXIT, oracle
from conformance.process.owners import OWNERS, STARTUP_RULES
from conformance.process.scenarios import DEFAULT_MODE, Scenario
from conformance.process.tier import product_name
from conformance.spec import Spec
from conformance.verdict.structured_reads import implied

Json = Any


def failures(spec: Spec, scenario: Scenario) -> Iterator[Json]:
    """Every failure fact (stage, category, ...) the scenario's expectation renders a line from."""
    expect = scenario.expect
    start = expect["start"]
    if isinstance(start, dict):
        rejected = start["rejected"]
        yield from (rejected[k] for k in ("startup", "teardown") if k in rejected)
    if "failure" in expect.get("result", {}):
        yield expect["result"]["failure"]
    if "oracle" in expect:
        row = decide(spec, expect["oracle"]).row
        if row.get("stage"):
            yield {"stage": row["stage"], "category": row["category"]}
    for item in expect.get("dispose", []):
        if isinstance(item, dict):
            yield item["rejected"]


def checks(spec: Spec, scenario: Scenario) -> list[str]:
    """Every requirement a failure of this scenario can be blamed on."""
    owners = OWNERS[scenario.product]
    startup = spec.table(scenario.product, "startup_rejections").requirements
    found = [*scenario.covers, *owners.grammar, *owners.stderr, "RED-008", *owners.launch]
    found += [*owners.cleanup_startup, *owners.cleanup_dispose, *startup]
    ctx = Context(spec, scenario.product, covers=tuple(scenario.covers))
    for fact in failures(spec, scenario):
        found += category_owner(ctx, fact["stage"], fact["category"])
        found += owners.outcome.get(fact["stage"], ())
        found += owners.stage
    expect = scenario.expect
    if isinstance(expect["start"], dict):
        found += [*owners.prefix, *owners.aggregate, *(r for r in STARTUP_RULES[scenario.product] if r in ctx.covers)]
    else:
        found += [*owners.idempotent, *owners.teardown, *owners.independent, *owners.failed_output]
        found += [*owners.cancellation, *owners.permission_fact, *owners.permission_where, "DIA-014"]
        found += [c for c in owners.completed if c in ctx.covers] or list(owners.completed[:1])
    if scenario.product == "codex":
        rejected = expect["start"]["rejected"] if isinstance(expect["start"], dict) else {}
        if any({"exitCode", "signal"} & set(rejected.get(line, {})) for line in ("startup", "teardown")):
            found += OBSERVE_EXIT  # a line without that exit is allowed, but reported
        if "frames" in expect:
            found += ["CDX-053", "CDX-054", "CDX-057", "CDX-017"]
        for frame in server_requests(scenario):
            rows = oracle(spec).reply_rows(frame)
            found += ["CDX-031", "CDX-035", *(rows[0]["covers"] if rows else ())]
    elif any(
        a.get("out", {}).get("type") == "control_request" for a in scenario.actions if isinstance(a.get("out"), dict)
    ):
        found += ["CC-025", "CC-026"]
    return list(dict.fromkeys(found))


def server_requests(scenario: Scenario) -> list[Json]:
    return [
        a["out"]
        for a in scenario.actions
        if isinstance(a.get("out"), dict) and "id" in a["out"] and "method" in a["out"]
    ]


def reaches(spec: Spec, scenario: Scenario) -> list[tuple[str, int]]:
    """The (area.table, row) pairs the scenario's expectation is rendered from."""
    area = scenario.product
    found: list[tuple[str, int]] = []
    row = startup_row(spec, scenario)
    if row is not None:
        found.append((f"{area}.startup_rejections", row))
    stages = [r["stage"] for r in spec.table(area, "stages").rows]
    found += [(f"{area}.stages", stages.index(f["stage"])) for f in failures(spec, scenario)]
    if scenario.for_each_row is not None and scenario.row is not None:
        found.append((f"{area}.{scenario.for_each_row}", scenario.row))
    if area == "codex":
        found += codex_rows(spec, scenario)
    else:
        found += claude_rows(spec, scenario)
    found += canary_rows(spec, scenario)
    found += implied(spec, found)  # e.g. a startup_rejections row exercises the read of its trigger
    return list(dict.fromkeys(found))


def canary_rows(spec: Spec, scenario: Scenario) -> list[tuple[str, int]]:
    """The canary_sites rows (this product, a declared site) the scenario plants a canary in."""
    name = product_name(spec, scenario.product)
    rows = spec.table("redaction", "canary_sites").rows
    return [
        ("redaction.canary_sites", i)
        for i, r in enumerate(rows)
        if r["product"] == name and r["site"] in scenario.plants
    ]


def codex_rows(spec: Spec, scenario: Scenario) -> list[tuple[str, int]]:
    found = []
    methods = [r["method"] for r in spec.table("codex", "client_frames").rows]
    frames = scenario.expect.get("frames", [])
    found += [("codex.client_frames", methods.index(m)) for m in frames if m in methods]
    if "thread/start" in frames:
        modes = [r["mode"] for r in spec.table("codex", "mode_fields").rows]
        if int(scenario.run.get("concurrent", 1)) > 1 and "mode" not in scenario.run:
            found += [("codex.mode_fields", i) for i in range(len(modes))]
        else:
            found.append(("codex.mode_fields", modes.index(scenario.run.get("mode", DEFAULT_MODE["codex"]))))
    replies = list(spec.table("codex", "server_request_replies").rows)
    for frame in server_requests(scenario):
        rows = oracle(spec).reply_rows(frame)
        if rows:
            found.append(("codex.server_request_replies", replies.index(rows[0])))
    permission = scenario.expect.get("result", {}).get("permission")
    if permission:
        facts = [r["trigger"] for r in spec.table("codex", "permission_facts").rows]
        found += [("codex.permission_facts", i) for i, t in enumerate(facts) if permission["trigger"] in t]
    return found


def claude_rows(spec: Spec, scenario: Scenario) -> list[tuple[str, int]]:
    triggers = [r["trigger"] for r in spec.table("claude-code", "permission_facts").rows]
    found = []
    permission = scenario.expect.get("result", {}).get("permission")
    if permission:
        found.append(("claude-code.permission_facts", triggers.index(permission["trigger"])))
    subtypes = {subtype: trigger for trigger, subtype in CONTROL_SUBTYPES.items()}
    for action in scenario.actions:
        out = action.get("out")
        if isinstance(out, dict) and out.get("type") == "control_request":
            trigger = subtypes.get(out.get("request", {}).get("subtype"))
            if trigger in triggers:
                found.append(("claude-code.permission_facts", triggers.index(trigger)))
    return found


def startup_row(spec: Spec, scenario: Scenario) -> int | None:
    """The startup_rejections row a rejected start() is rendered from: the row the scenario names,
    or for a Codex startup line the row whose trigger the scenario's run sets up."""
    start = scenario.expect["start"]
    if not isinstance(start, dict):
        return None
    rejected = start["rejected"]
    for key in ("plain", "row"):
        if key in rejected:
            return int(rejected[key])
    rows = list(spec.table(scenario.product, "startup_rejections").rows)

    def first(form: str, stage: str | None = None, words: str = "") -> int:
        return next(
            i
            for i, r in enumerate(rows)
            if r["form"] == form and (stage is None or r.get("stage") == stage) and words in r["trigger"]
        )

    if "teardown" in rejected:
        return first("aggregate")
    if scenario.run.get("cwd", "default") != "default":
        return first("startup-line", words="working directory")
    if scenario.run.get("executable", "fake") != "fake":
        return first("startup-line", words="spawn itself")
    return first("startup-line", stage=rejected["startup"]["stage"], words="rollback succeeds")
