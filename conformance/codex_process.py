"""The Codex process tier: scenarios turned into runs of the fake app-server, and the oracle
that says what run_codex must answer and what the provider must have written.

Expected values come from the spec: texts are rendered from a scenario's failure facts with the
Codex oracle (conformance/codex.py: failure_line_fields, permission_facts rows), plain start()
texts are rows of table startup_rejections, prefixes rows of diagnostic.products, the frames the
provider writes rows of client_frames and mode_fields, replies rows of server_request_replies.
What the provider sent is read from the fake's record (conformance/scenarios.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from pathlib import Path
from typing import Any

from conformance.codex import CodexOracle, js_uint16
from conformance.diagnostic import AGGREGATE_SEPARATOR
from conformance.grammar import roots
from conformance.processes import RUN_TOKEN_VARIABLE
from conformance.scenarios import Scenario, build_run, load_scenarios, read_record, scenario_file
from conformance.spec import Spec

Json = Any

PRODUCT = "codex"
# A copy of a concurrent scenario finds its own identity in this variable ("$env.CODEX_FAKE_COPY").
COPY_VARIABLE = "CODEX_FAKE_COPY"
# The mode the examples of table client_frames are written for (its description says so).
EXAMPLE_MODE = "never"
# The interpreter the fakes run on adds this when the environment names no locale (PEP 538).
COERCED_LOCALE = "LC_CTYPE"


def substitute(value: Json, bound: dict[str, Json]) -> Json:
    """Every whole string "$NAME.key" replaced by that field of ``bound[NAME]`` (the fake's own syntax)."""
    if isinstance(value, dict):
        return {k: substitute(v, bound) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, bound) for v in value]
    if isinstance(value, str) and value.startswith("$"):
        name, _, key = value[1:].partition(".")
        if name in bound:
            if key not in bound[name]:
                raise KeyError(f"{value!r}: {name} has no {key!r}")
            return bound[name][key]
    return value


class ProcessOracle:
    """What codex.yaml and diagnostic.yaml say a run of a scenario must show."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.codex = CodexOracle(spec)
        [product] = [r for r in spec.table("diagnostic", "products").rows if r["area"] == PRODUCT]
        self.prefix: str = product["error_prefix"]
        self.startup_rows = list(spec.table(PRODUCT, "startup_rejections").rows)
        self.plain_errors = {str(v) for v in spec.vocabulary(f"{PRODUCT}.plain_error").values}
        self.frames = {row["method"]: row for row in spec.table(PRODUCT, "client_frames").rows}
        self.mode_fields = {row["mode"]: row["fields"] for row in spec.table(PRODUCT, "mode_fields").rows}
        self.modes = [str(m) for m in spec.vocabulary(f"{PRODUCT}.permission_mode").values]
        self.replies = list(spec.table(PRODUCT, "server_request_replies").rows)
        self.server_requests = {str(m) for m in spec.vocabulary(f"{PRODUCT}.server_request").values}
        self.terminals = list(spec.table(PRODUCT, "terminal_handling").rows)
        self.grammar = roots(spec)
        example = self.frames["turn/interrupt"]["example"]["params"]
        self.thread_id: str = example["threadId"]  # the ids of the tables, which the fake's steps use
        self.turn_id: str = example["turnId"]

    # ---- scenarios

    def scenarios(self) -> list[Scenario]:
        """The scenarios of fixtures/scenarios/codex.yaml, a table template expanded once per row."""
        expanded: list[Scenario] = []
        for scenario in load_scenarios(self.spec, scenario_file(PRODUCT)):
            table = scenario.for_each_row
            expanded.extend(self.expand(scenario, table) if table else [scenario])
        return expanded

    def expand(self, scenario: Scenario, table: str) -> list[Scenario]:
        out = []
        for row in self.spec.table(PRODUCT, table).rows:
            key = str(next(iter(row.values())))
            expect = substitute(scenario.expect, {"row": row})
            if table == "variants":
                self.complete_variant(expect["result"], row)
            out.append(
                dataclasses.replace(
                    scenario,
                    name=f"{scenario.name}-{key}",
                    actions=substitute(scenario.actions, {"row": row}),
                    expect=expect,
                )
            )
        return out

    def complete_variant(self, result: Json, row: Json) -> None:
        """The facts a failed terminal with this row's wire form adds: the kept HTTP status (CDX-004,
        read as http_status_forms says) and the permission fact terminal_handling records."""
        if row["keeps_http_status"]:
            [detail] = row["wire"].values()
            status = js_uint16(detail.get("httpStatusCode"))
            if status is not None:
                result["failure"]["httpStatus"] = status
        if any(t["permission_fact"] and t.get("category") == row["variant"] for t in self.terminals):
            result["permission"] = {"trigger": row["variant"]}

    # ---- runs

    def runs(self, scenario: Scenario, folder: Path) -> list[tuple[Json, Path]]:
        """The RUNs of one call, with the record of each: copies of a concurrent scenario differ in
        their identity variable and cycle through the permission modes."""
        copies = int(scenario.run.get("concurrent", 1))
        built = []
        for index in range(copies):
            run, record = build_run(scenario, folder / f"copy-{index}")
            if copies > 1:
                run["env"][COPY_VARIABLE] = f"copy-{index}"
                run["mode"] = self.modes[index % len(self.modes)]
            built.append((run, record))
        return built

    # ---- expected outcomes

    def failure_line(self, failure: Json, *, with_outcome: bool = True) -> str:
        return self.codex.failure_line(
            failure["stage"],
            failure["category"],
            failure.get("httpStatus"),
            failure.get("exitCode") if with_outcome else None,
            failure.get("signal") if with_outcome else None,
        )

    def lines(self, failure: Json) -> list[str]:
        """The failure line, and without its outcome when the scenario races it."""
        lines = [self.failure_line(failure)]
        if failure.get("outcome_optional"):
            lines.append(self.failure_line(failure, with_outcome=False))
        return lines

    def start(self, expected: Json) -> list[Json]:
        """The start() settlements the spec allows."""
        if expected == "published":
            return [{"published": True}]
        rejected = expected["rejected"]
        if "plain" in rejected:
            return [{"rejected": self.startup_rows[rejected["plain"]]["plain_error"]}]
        texts = [self.prefix + line for line in self.lines(rejected["startup"])]
        if "teardown" in rejected:
            teardowns = [self.prefix + line for line in self.lines(rejected["teardown"])]
            texts = [AGGREGATE_SEPARATOR.join(pair) for pair in itertools.product(texts, teardowns)]
        return [{"rejected": text} for text in texts]

    def result(self, expected: Json | None, mode: str) -> list[Json | None]:
        """The SubagentResults the spec allows (None when start() rejects)."""
        if expected is None:
            return [None]
        text = expected.get("output_text")
        base: Json = {
            "stopReason": expected["stopReason"],
            "output": [] if text is None else [{"type": "text", "text": text}],
        }
        if "failure" not in expected:
            return [base]
        permission = expected.get("permission")
        fact = self.codex.fact_by_trigger(permission["trigger"]) if permission else None
        return [
            {**base, "diagnostic": self.codex.diagnostic(mode, line, fact)} for line in self.lines(expected["failure"])
        ]

    def dispose(self, expected: list[Json] | None) -> list[list[Json]]:
        if expected is None:
            return [[]]
        options = [
            [{"resolved": True}]
            if s == "resolved"
            else [{"rejected": self.prefix + line} for line in self.lines(s["rejected"])]
            for s in expected
        ]
        return [list(pair) for pair in itertools.product(*options)]

    # ---- what the provider wrote

    def frame_problems(self, scenario: Scenario, run: Json, record: list[Json]) -> list[str]:
        """Every way the client frames of a run differ from table client_frames (CDX-053, CDX-054, CDX-057)."""
        sent = [line["stdin"] for line in record if "stdin" in line and "method" in line["stdin"]]
        problems = []
        methods = [frame.get("method") for frame in sent]
        if methods != scenario.expect["frames"]:
            problems.append(f"the provider wrote {methods}, the scenario expects {scenario.expect['frames']}")
        ids = [frame["id"] for frame in sent if "id" in frame]
        if len(ids) != len(set(map(json.dumps, ids))):
            problems.append(f"request ids are reused on the connection: {ids}")
        thread_id, turn_id = self.ids(scenario, run)
        for frame in sent:
            expected = self.expected_frame(frame.get("method"), run, thread_id, turn_id)
            if expected is None:
                continue
            shape = {k: v for k, v in frame.items() if k != "id"}
            if shape != expected:
                problems.append(
                    f"the provider wrote\n  {json.dumps(frame)}\nclient_frames says\n  {json.dumps(expected)}"
                )
            row = self.frames[frame["method"]]
            is_request = row["kind"] == "request"
            if is_request != ("id" in frame) or (is_request and not isinstance(frame["id"], str | int)):
                problems.append(f"{frame['method']} is a {row['kind']}, but its id is {frame.get('id')!r}")
        return problems

    def expected_frame(self, method: str | None, run: Json, thread_id: str, turn_id: str) -> Json | None:
        """The table's example frame with this run's values: cwd, mode fields, task, thread and turn ids."""
        if method not in self.frames:
            return None
        frame = json.loads(json.dumps(self.frames[method]["example"]))
        if method == "thread/start":  # the example is mode never's: its fields give way to the run's mode
            fields = {k: v for k, v in frame["params"].items() if k not in self.mode_fields[EXAMPLE_MODE]}
            frame["params"] = {**fields, "cwd": run["cwd"], **self.mode_fields[run["mode"]]}
        elif method == "turn/start":
            [item] = {json.dumps({**i, "text": None}) for i in frame["params"]["input"]}
            template = json.loads(item)
            frame["params"]["input"] = [{**template, "text": block["text"]} for block in run["task"]]
            frame["params"]["threadId"] = thread_id
        elif method == "turn/interrupt":
            frame["params"] = {"threadId": thread_id, "turnId": turn_id}
        return frame

    def ids(self, scenario: Scenario, run: Json) -> tuple[str, str]:
        """The thread and turn ids the fake gives: its own responses in the script, else the tables' ids."""
        bound = {"env": run["env"]}
        thread_id, turn_id = self.thread_id, self.turn_id
        for action in scenario.actions:
            result = action.get("out", {}).get("result") if isinstance(action.get("out"), dict) else None
            if isinstance(result, dict) and isinstance(result.get("thread"), dict):
                thread_id = substitute(result["thread"]["id"], bound)
            if isinstance(result, dict) and isinstance(result.get("turn"), dict):
                turn_id = substitute(result["turn"]["id"], bound)
        return thread_id, turn_id

    def reply_problems(self, scenario: Scenario, record: list[Json]) -> list[str]:
        """Each server request that is a row of server_request_replies is answered as the row says (CDX-031..035)."""
        replies = [line["stdin"] for line in record if "stdin" in line and "method" not in line["stdin"]]
        problems = []
        for action in scenario.actions:
            frame = action.get("out")
            if not (isinstance(frame, dict) and "id" in frame and "method" in frame):
                continue
            rows = [r for r in self.replies if r["method"] == frame["method"] and r["params"] == frame["params"]]
            if not rows and frame["method"] not in self.server_requests:  # any unsupported method: as its rows
                rows = [r for r in self.replies if r["method"] not in self.server_requests]
            if not rows:
                continue
            answers = [r for r in replies if r.get("id") == frame["id"] and type(r.get("id")) is type(frame["id"])]
            if len(answers) != 1:
                problems.append(f"request {frame['id']!r} ({frame['method']}) got {len(answers)} replies: {answers}")
                continue
            [answer] = answers
            want = rows[0]["reply"]
            got = {k: v for k, v in answer.items() if k in ("result", "error")}
            if "error" in got and isinstance(got["error"], dict):
                got["error"] = {"code": got["error"].get("code")}
            if got != want or answer.get("jsonrpc") != "2.0":
                problems.append(
                    f"request {frame['id']!r} ({rows[0]['name']}) was answered {answer}, the row says {want}"
                )
        return problems

    def process_problems(self, run: Json, record: list[Json]) -> list[str]:
        """The app-server was started with exactly the run's argv, working directory and environment (CDX-052)."""
        if not record:
            return ["the fake never started"]
        first = record[0]
        problems = []
        if first["argv"] != run["argv"][2:]:  # the interpreter and -I are not in sys.argv
            problems.append(f"the app-server got the arguments {first['argv']}, not {run['argv'][2:]}")
        if os.path.realpath(first["cwd"]) != os.path.realpath(run["cwd"]):
            problems.append(f"the app-server ran in {first['cwd']}, not {run['cwd']}")
        env = dict(first["env"])
        env.pop(RUN_TOKEN_VARIABLE, None)  # call_runs adds it to every run
        if COERCED_LOCALE not in run["env"]:
            env.pop(COERCED_LOCALE, None)
        if env != run["env"]:
            extra = sorted(set(env) - set(run["env"]))
            missing = sorted(set(run["env"]) - set(env))
            changed = sorted(k for k in set(env) & set(run["env"]) if env[k] != run["env"][k])
            problems.append(
                f"the app-server's environment differs: added {extra}, missing {missing}, changed {changed}"
            )
        return problems

    # ---- texts

    def text_problems(self, outcome: Json) -> list[str]:
        """Every text of an outcome is a sentence of the Codex grammar or a plain_error value (CDX-072)."""
        label = self.codex.product
        texts: list[tuple[str, str]] = []
        if "rejected" in outcome["start"]:
            texts.append(("start-rejection", outcome["start"]["rejected"]))
        if outcome["result"] is not None and "diagnostic" in outcome["result"]:
            texts.append(("run-result", outcome["result"]["diagnostic"]))
        texts += [("dispose-rejection", s["rejected"]) for s in outcome["dispose"] if "rejected" in s]
        return [
            f"{kind} text is no sentence of the grammar: {text!r}"
            for kind, text in texts
            if not (kind == "start-rejection" and text in self.plain_errors)
            and not self.grammar[(label, kind)].matches(text)
        ]


def overlap_problems(records: list[list[Json]]) -> list[str]:
    """The runs of one call overlapped: every fake started before any of them ended (its first
    ending line, or else the last line it wrote while alive)."""
    if not all(records):
        return [f"{sum(1 for r in records if not r)} of {len(records)} fakes never started"]
    starts = [r[0]["t"] for r in records]
    alive = [next((line["t"] for line in r if "end" in line), r[-1]["t"]) for r in records]
    if max(starts) >= min(alive):
        return ["the runs did not overlap: a fake ended before another one started"]
    return []


def records(built: list[tuple[Json, Path]]) -> list[list[Json]]:
    return [read_record(record) for _, record in built]
