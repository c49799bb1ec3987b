"""The Claude Code layer of the process tier: the scenarios it generates, the outcomes it expects,
and the checks of what the provider sent the CLI.

Expected texts are rendered, never written: a failure's facts through the diagnostic grammar
(diagnostic.yaml ``grammar``, via :func:`conformance.areas.claude_code.oracle.render`), plain start()
rejections from rows of claude-code.yaml ``startup_rejections``, permission lines from rows
of ``permission_facts``, and the scenarios of every SDK result subtype from vocabulary
``result_subtype`` with the pure tier's oracle. Planning runs, planting canaries and the checks
both products share are conformance/process/tier.py and checks.py.
"""

from __future__ import annotations

from typing import Any

from conformance.areas.claude_code.oracle import expected_outcome, render, root_symbol
from conformance.areas.diagnostic.oracle import AGGREGATE_SEPARATOR
from conformance.process.blame import Problem
from conformance.process.scenarios import CANARY, PlannedRun, Scenario
from conformance.spec import Spec

Json = dict[str, Any]
AREA = "claude-code"

# The Agent SDK's side of the stream-json control protocol (@anthropic-ai/claude-agent-sdk
# 0.3.220 sdk.mjs, sdk.d.ts SDKControl*Request): the control request subtype each
# permission_facts trigger arrives as, the flags every query passes, and the flag that
# carries the permission mode. The spec names the triggers; these are their wire form.
CONTROL_SUBTYPES = {"canUseTool": "can_use_tool", "onElicitation": "elicitation", "onUserDialog": "request_user_dialog"}
STREAM_JSON_FLAGS = (("--output-format", "stream-json"), ("--input-format", "stream-json"))
MODE_FLAG = "--permission-mode"
BYPASS = "bypassPermissions"
# What the Agent SDK adds for every run whose tool-permission callback is set, and to the CLI's
# environment at every release besides its own version (spec table sdk_wire, CC-044).
PROMPT_TOOL_FLAG = ("--permission-prompt-tool", "stdio")
SDK_VARIABLES = {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}

# --------------------------------------------------------------------------- scenarios


def generated_scenarios(spec: Spec) -> list[Scenario]:
    """One scenario per SDK result subtype of the locked union: the fake CLI sends a result of
    that subtype over the wire; the expectation is the pure tier's oracle on the same message."""
    made = []
    for subtype in spec.vocabulary(f"{AREA}.result_subtype").values:
        if subtype == "success":
            message: Json = {"type": "result", "subtype": subtype, "is_error": False, "result": "The answer.\n"}
        else:
            errors = [f"{CANARY}errors_{subtype}", f"/private/{CANARY}path/secret.txt"]
            message = {"type": "result", "subtype": subtype, "is_error": True, "errors": errors, "num_turns": 2}
        text = {"type": "text", "text": "Looking at the files."}
        made.append(
            Scenario(
                product=AREA,
                name=f"result-subtype-{str(subtype).replace('_', '-')}",
                covers=["CC-001", "CC-003", "CC-007", "CC-008", "CC-012", "CC-020", "RED-001"],
                description=f"The CLI streams text and ends with a result of subtype {subtype}.",
                run={},
                actions=[
                    {"await": {"type": "user"}, "as": "task"},
                    {"out": {"type": "assistant", "message": {"role": "assistant", "content": [text]}}},
                    {"out": message},
                ],
                responders=[],
                expect={"start": "published", "oracle": {"mode": "dontAsk", "events": [{"message": message}]}},
                where=f"vocabulary {AREA}.result_subtype value {subtype!r}",
                plants=[] if subtype == "success" else ["sdk-result-errors"],
            )
        )
    return made


# --------------------------------------------------------------------------- expected texts


def _error_text_symbol(spec: Spec) -> str:
    """The symbol a dispose() rejection consists of: the product prefix plus one failure line."""
    rows = [
        r for r in spec.table("diagnostic", "grammar").rows if r["symbol"] == root_symbol(spec, "dispose-rejection")
    ]
    [row] = rows
    [item] = row["sequence"]
    return str(item["symbol"])


def _values(failure: Json) -> Json:
    return {
        "stage": failure["stage"],
        "categories": failure["category"],
        "integer": failure.get("exitCode"),
        "diagnostic.signal": failure.get("signal"),
    }


def _allowed(spec: Spec, failure: Json, surface: str, where: str) -> None:
    """A scenario may only expect a (stage, category) that table stages lets surface there."""
    rows = {r["stage"]: r for r in spec.table(AREA, "stages").rows}
    row = rows.get(failure["stage"])
    assert row is not None and failure["category"] in row["categories"] and surface in row["surfaces_in"], (
        f"{where}: the scenario expects {failure} in a {surface}, which table stages does not allow"
    )


def error_text(spec: Spec, failure: Json) -> str:
    """'subagent-claude-code: ' plus the failure line of these facts, generated from the grammar."""
    return render(spec, _error_text_symbol(spec), _values(failure))


def expected_start(spec: Spec, scenario: Scenario) -> str | None:
    """The rejection text start() must give, or None when the run must be published."""
    start = scenario.expect["start"]
    if start == "published":
        return None
    rejected = start["rejected"]
    rows = spec.table(AREA, "startup_rejections").rows
    if "plain" in rejected:
        row = rows[rejected["plain"]]
        assert row["form"] == "plain", f"{scenario.where}: startup_rejections row {rejected['plain']} is not plain"
        return str(row["plain_error"])
    row = rows[rejected["row"]]
    startup, teardown = rejected["startup"], rejected.get("teardown")
    observed = {"exitCode", "signal"}
    assert (teardown is not None) == (row["form"] == "aggregate"), (
        f"{scenario.where}: startup_rejections row {rejected['row']} has form {row['form']}"
    )
    assert row.get("startup_outcome", False) or not observed & set(startup), (
        f"{scenario.where}: row {rejected['row']} puts no outcome on the query-start line"
    )
    _allowed(spec, startup, "start-rejection", scenario.where)
    text = error_text(spec, startup)
    if teardown is not None:
        assert row.get("teardown_outcome", False) or not observed & set(teardown), (
            f"{scenario.where}: row {rejected['row']} puts no outcome on the teardown line"
        )
        _allowed(spec, teardown, "dispose-rejection", scenario.where)
        text += AGGREGATE_SEPARATOR + error_text(spec, teardown)
    return text


def expected_results(spec: Spec, scenario: Scenario, mode: str) -> list[Json | None]:
    """The SubagentResults the run may settle with ([None] when start() must reject): one, or,
    where the scenario races the process exit against the frame that decides the run
    (``outcome_optional``), the line with and without the exit's outcome."""
    if "oracle" in scenario.expect:
        return [dict(expected_outcome(spec, scenario.expect["oracle"]))]
    if "result" not in scenario.expect:
        return [None]
    want = scenario.expect["result"]
    stop = want["stopReason"]
    text = want.get("output_text")
    result: Json = {"stopReason": stop, "output": [] if text is None else [{"type": "text", "text": text}]}
    if "failure" not in want:
        return [result]
    failure = want["failure"]
    _allowed(spec, failure, "run-result", scenario.where)
    variants = [failure]
    if failure.get("outcome_optional"):
        variants.append({k: v for k, v in failure.items() if k not in ("exitCode", "signal")})
    results: list[Json | None] = []
    for facts in variants:
        values = _values(facts)
        if "permission" in want:
            fact = {r["trigger"]: r for r in spec.table(AREA, "permission_facts").rows}[want["permission"]["trigger"]]
            assert mode in fact["modes"], f"{scenario.where}: {fact['trigger']} never fires in mode {mode}"
            values.update({f"{AREA}.permission_mode": mode, **{k: fact[k] for k in ("request", "decision", "reason")}})
        results.append({**result, "diagnostic": render(spec, root_symbol(spec, "run-result"), values)})
    return results


def expected_dispose(spec: Spec, scenario: Scenario) -> list[Json]:
    if scenario.expect["start"] != "published":
        return []
    settlements: list[Json] = []
    for item in scenario.expect.get("dispose", ["resolved", "resolved"]):
        if item == "resolved":
            settlements.append({"resolved": True})
        else:
            _allowed(spec, item["rejected"], "dispose-rejection", scenario.where)
            settlements.append({"rejected": error_text(spec, item["rejected"])})
    return settlements


def complete_row(spec: Spec, table: str, row: Json, expect: Json) -> None:
    """No Claude Code scenario is a table template: nothing to complete."""


def allowed_outcomes(spec: Spec, scenario: Scenario, run: Json) -> dict[str, list[Any]]:
    """The run outcome (operations.json run_outcome) the scenario must give: one per part."""
    start = expected_start(spec, scenario)
    started: Json = {"published": True} if start is None else {"rejected": start}
    return {
        "start": [started],
        "result": expected_results(spec, scenario, run["mode"]),
        "dispose": [expected_dispose(spec, scenario)],
    }


def advised_outcomes(spec: Spec, scenario: Scenario, run: Json) -> dict[str, list[tuple[Json, tuple[str, ...]]]]:
    """No allowed Claude Code outcome leaves a SHOULD unmet."""
    return {}


# --------------------------------------------------------------------------- what the provider sent


def protocol_problems(spec: Spec, planned: PlannedRun, record: list[Json]) -> list[Problem]:
    """Every control request the fake sent was answered with exactly its permission_facts row's
    answer when the row fires in the run's mode (CC-025), and never with a grant otherwise (in
    bypassPermissions no tool callback is installed: CC-026)."""
    rows = {r["trigger"]: r for r in spec.table(AREA, "permission_facts").rows}
    trigger_of = {subtype: trigger for trigger, subtype in CONTROL_SUBTYPES.items()}
    sent = {
        a["out"]["request_id"]: a["out"]["request"]["subtype"]
        for a in planned.scenario.actions
        if "out" in a and isinstance(a["out"], dict) and a["out"].get("type") == "control_request"
    }
    answers = {}
    for line in record:
        frame = line.get("stdin")
        if isinstance(frame, dict) and frame.get("type") == "control_response":
            response = frame.get("response") or {}
            answers[response.get("request_id")] = response
    problems = []
    answered = ("CC-025",)
    for request_id, subtype in sent.items():
        response = answers.get(request_id)
        row = rows[trigger_of[subtype]]
        if response is None:
            problems.append(Problem(answered, f"the {subtype} control request {request_id} was never answered"))
        elif planned.run["mode"] in row["modes"]:
            if response.get("subtype") != "success" or response.get("response") != row["answer"]:
                problems.append(
                    Problem(answered, f"{subtype} was answered {response!r}; permission_facts says {row['answer']!r}")
                )
        elif response.get("subtype") == "success" and response.get("response", {}).get("behavior") == "allow":
            problems.append(Problem(("CC-026",), f"{subtype} was granted in mode {planned.run['mode']}: {response!r}"))
    return problems


def sent_flags(planned: PlannedRun) -> list[str]:
    """The arguments the provider appended to the CLI command (the fake records its own argv;
    process_tier.launch_problems checks that it starts with the RUN's)."""
    [first, *_] = planned.recorded()
    argv: list[str] = first["argv"]
    return argv[len(planned.run["argv"]) - 2 :]  # "python -I" is not in the fake's own argv


def flag_value(flags: list[str], name: str) -> str | None:
    for index, arg in enumerate(flags):
        if arg == name and index + 1 < len(flags):
            return flags[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def user_text(frame: Json) -> str | None:
    """The text of a stream-json user message: a string content, or its text blocks joined."""
    if frame.get("type") != "user" or not isinstance(frame.get("message"), dict):
        return None
    content = frame["message"].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return None
