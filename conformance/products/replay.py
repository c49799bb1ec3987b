"""Replay: a recorded wire transcript of a real product as the observations of a pure operation.

``codex_scenario`` and ``claude_code_scenario`` turn a recording (conformance/products/recordings.py)
into the input codex_outcome and claude_code_outcome take; ``replay`` checks that the
transcript still shows what its case claims and that the operation answers the case's expected
result, or raises a Violation naming the rule the difference shows, with the case, the
recording and an excerpt of its transcript.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from conformance.areas.claude_code.checks import diagnosis
from conformance.areas.claude_code.oracle import decide, expected_outcome
from conformance.process.blame import Context, blamed, result_problems
from conformance.process.blame import Problem as Difference
from conformance.products.recordings import (
    Case,
    codex_wire_form,
    dig,
    expected_results,
    recording_file,
)
from conformance.spec import Spec
from conformance.verdict.blame import Violation

Json = Any


# ---- replay: a transcript as the observations of a pure operation


def codex_scenario(recording: Json) -> Json:
    """codex_outcome's input from a Codex transcript: the thread id of the thread/start response,
    then what the provider observes once turn/start is sent (its response as ``turn_start``,
    every later frame, line and stderr chunk in order; stderr from the spawn on), up to the turn's
    turn/completed; a transcript without one keeps its stdout end and exit."""
    sent = [item["stdin"] for item in recording["wire"] if "stdin" in item]
    ids = {frame.get("method"): frame.get("id") for frame in sent if isinstance(frame, dict)}
    if "thread/start" not in ids or "turn/start" not in ids:
        raise ValueError("the transcript has no thread/start or no turn/start request")
    thread_id: Any = None
    turn_id: Any = None
    published = False
    events: list[Json] = []
    for item in recording["wire"]:
        if "stdin" in item:
            published = published or item["stdin"].get("id") == ids["turn/start"]
            continue
        if "stderr" in item:
            events.append({"stderr": item["stderr"]})
        elif "stdout" in item:
            frame = item["stdout"]
            is_response = isinstance(frame, dict) and "method" not in frame
            if is_response and frame.get("id") == ids["thread/start"]:
                thread_id = dig(frame, "result", "thread", "id")
            if not published:
                continue
            if is_response and frame.get("id") == ids["turn/start"]:
                outcome = {"result": frame["result"]} if "result" in frame else {"error": frame.get("error", {})}
                turn_id = dig(frame, "result", "turn", "id")
                events.append({"turn_start": outcome})
                continue
            if isinstance(frame, dict) and "method" in frame and "id" in frame:
                raise ValueError(f"the transcript has a server request ({frame['method']}); replays model none")
            events.append({"frame": frame})
            if dig(frame, "method") == "turn/completed" and dig(frame, "params", "turn", "id") == turn_id:
                break
        elif published and "stdout_line" in item:
            events.append({"line": item["stdout_line"]})
        elif published and ("stdout_end" in item or "exit" in item):
            events.append(item)
    if not isinstance(thread_id, str):
        raise ValueError("the transcript has no valid thread/start response")
    return {"mode": recording["mode"], "thread_id": thread_id, "events": events}


def codex_terminal(scenario: Json) -> Json:
    """The ``turn`` of the scenario's last turn/completed frame (None when there is none)."""
    for event in reversed(scenario["events"]):
        frame = event.get("frame")
        if isinstance(frame, dict) and frame.get("method") == "turn/completed":
            return frame["params"]["turn"]
    return None


def claude_code_scenario(recording: Json) -> Json:
    """claude_code_outcome's input from a Claude Code recording, made through the real Agent SDK
    (conformance/products/sdk_run.py): every message its query() yielded, in order; what its
    iteration threw, when it threw; and the CLI's exit as the outcome only where the driver saw
    the exit before the run was decided (before the first result message and before the
    iteration ended): a provider reads the outcome at the moment it classifies."""
    events: list[Json] = []
    scenario: Json = {"mode": recording["mode"], "events": events}
    decided = False
    for item in recording["wire"]:
        if "message" in item:
            events.append({"message": item["message"]})
            decided = decided or (isinstance(item["message"], dict) and item["message"].get("type") == "result")
        elif "exit" in item and not decided:
            scenario["outcome"] = item["exit"]
        elif "query_end" in item:
            decided = True
            thrown = item["query_end"]["thrown"]
            if thrown is not None:
                scenario["exception"] = {"message": thrown["message"]}
    return scenario


# ---- the replay check, shared by the default tier (committed recordings) and the real tier (fresh ones)


EXCERPT_LINES = 60  # transcript lines a failing replay shows (the recording holds them all)


def excerpt(recording: Json) -> str:
    """The recorded wire as lines: what the client sent, what the product wrote, how it ended."""
    lines = []
    for item in recording["wire"]:
        if "stdin" in item:
            lines.append(f"client sent:  {json.dumps(item['stdin'], ensure_ascii=False)}")
        elif "stdout" in item:
            lines.append(f"product sent: {json.dumps(item['stdout'], ensure_ascii=False)}")
        elif "stdout_line" in item:
            lines.append(f"product line: {item['stdout_line']}")
        elif "stderr" in item:
            lines.append(f"stderr:       {json.dumps(item['stderr'], ensure_ascii=False)}")
        elif "message" in item:
            lines.append(f"SDK yielded:  {json.dumps(item['message'], ensure_ascii=False)}")
        else:
            lines.append(f"product:      {json.dumps(item, ensure_ascii=False)}")
    shown = lines[:EXCERPT_LINES]
    rest = len(lines) - len(shown)
    return "\n".join(shown + ([f"({rest} more line(s) in the recording)"] if rest else []))


def replay(
    spec: Spec, case: Case, recording: Json, call: Callable[[str, Json], Json], path: Path | None = None
) -> None:
    """Replay ``recording`` through the pure operation of its product (``call(op, input)``) and
    assert that the transcript shows what the case claims; the operation must answer the case's
    expected result, or a Violation names the rule the difference shows (conformance/process/blame.py)
    with the case, the recording and an excerpt of its transcript."""
    if case.product == "codex":
        operation, scenario = "codex_outcome", codex_scenario(recording)
        turn = codex_terminal(scenario)
        assert turn is not None, f"the transcript of {case.id} has no turn/completed for its turn"
        wire = codex_wire_form(spec, case.expect)
        shown = (turn.get("status"), (turn.get("error") or {}).get("codexErrorInfo") if wire is not None else None)
        assert shown == ("completed" if wire is None else "failed", wire), (
            f"{case.id}: the real app-server ended the turn {turn.get('status')!r} with {turn.get('error')!r}; "
            f"the case expects {'a completed turn' if wire is None else f'a failed turn carrying {wire!r}'}"
        )
        expected = [{**result, "replies": []} for result in expected_results(spec, case)]
    else:
        operation, scenario = "claude_code_outcome", claude_code_scenario(recording)
        read = expected_outcome(spec, scenario)
        assert read in expected_results(spec, case), (
            f"{case.id}: the spec's classification reads the real transcript as {read!r} "
            f"(row {decide(spec, scenario).row['name']!r}), the case expects "
            + " or ".join(repr(r) for r in expected_results(spec, case))
        )
        expected = [read]  # the transcript fixes what was observed when: one result is right
    actual = call(operation, scenario)
    if actual in expected:
        return
    if case.product == "claude-code":  # the input claude_code_outcome takes: blamed as the claude_code tier blames it
        blame = diagnosis(spec).diagnose(scenario, expected[0], actual, lambda s: call(operation, s))
        _violation(blame, case, recording, path, scenario, expected[0], actual)
    ctx = Context(
        spec,
        case.product,
        covers=tuple(case.covers),
        stderr="".join(item["stderr"] for item in recording["wire"] if "stderr" in item),
        stdout=json.dumps([item["stdout"] for item in recording["wire"] if "stdout" in item], ensure_ascii=False),
    )
    found = []
    for option in expected:  # diagnosed against the nearest result the spec allows
        want = {k: v for k, v in option.items() if k != "replies"}
        got = {k: v for k, v in actual.items() if k != "replies"} if isinstance(actual, dict) else actual
        problems = result_problems(ctx, want, got) if isinstance(got, dict) else []
        if isinstance(actual, dict) and actual.get("replies", []) != option.get("replies", []):
            problems.append(Difference(("CDX-053",), "replies written though the transcript has no server request"))
        found.append(problems or [Difference(tuple(case.covers), "the result differs")])
    problems = sorted(found, key=len)[0]
    raise Violation(
        blamed(problems),
        operation=operation,
        input=scenario,
        expected=expected[0] if len(expected) == 1 else {"one of": expected},
        actual=actual,
        detail="\n".join(f"{p.message} [{', '.join(p.requirements)}]" for p in problems),
        sections=_sections(case, recording, path),
    )


def _sections(case: Case, recording: Json, path: Path | None) -> dict[str, str]:
    return {
        "case": f"{case.id} ({case.where}): {case.description}",
        "recording": str(path or recording_file(case.product, case.version, case.name)),
        "transcript excerpt": excerpt(recording),
    }


def _violation(
    requirements: list[str],
    case: Case,
    recording: Json,
    path: Path | None,
    scenario: Json,
    expected: Json,
    actual: Json,
) -> NoReturn:
    """A Claude Code replay's difference, blamed by the claude_code tier's diagnosis of the same
    input (conformance/areas/claude_code/blame.py): a published run's failure reported as a
    start-up failure is CC-035's, whatever the transcript's case covers."""
    raise Violation(
        requirements,
        operation="claude_code_outcome",
        input=scenario,
        expected=expected,
        actual=actual,
        sections=_sections(case, recording, path),
    )
