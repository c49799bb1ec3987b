"""The Codex layer of the process tier: the outcomes run_codex must answer and what the provider
must have written to the fake app-server.

Expected values come from the spec: texts are rendered from a scenario's failure facts with the
Codex oracle (conformance/areas/codex/oracle.py: failure_line_fields, permission_facts rows), plain start()
texts are rows of table startup_rejections, prefixes rows of diagnostic.products, the frames the
provider writes rows of client_frames and mode_fields, replies rows of server_request_replies.
Planning runs, planting canaries, expanding the ``for_each_row`` templates and the checks both
products share are conformance/process/tier.py and checks.py.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from conformance.areas.codex.oracle import CodexOracle, js_uint16
from conformance.areas.diagnostic.oracle import AGGREGATE_SEPARATOR
from conformance.process.blame import Problem
from conformance.process.scenarios import PlannedRun, Scenario, substitute
from conformance.spec import Spec

Json = Any

PRODUCT = "codex"
# The mode the examples of table client_frames are written for (its description says so).
EXAMPLE_MODE = "never"
INTERRUPT = "turn/interrupt"
# How a fake app-server dies of its teardown: SIGTERM, or SIGKILL after the grace when it ignores
# SIGTERM (CDX-066): the outcomes a teardown line may show when nothing was observed before it.
TERMINATION_SIGNALS = ("SIGTERM", "SIGKILL")
# The SHOULD an omitted exit, that came before rollback began, leaves unmet (CDX-062 allows it).
OBSERVE_EXIT = ("CDX-076",)


class ProcessOracle:
    """What codex.yaml and diagnostic.yaml say a run of a scenario must show."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.codex = CodexOracle(spec)
        [product] = [r for r in spec.table("diagnostic", "products").rows if r["area"] == PRODUCT]
        self.prefix: str = product["error_prefix"]
        self.startup_rows = list(spec.table(PRODUCT, "startup_rejections").rows)
        self.frames = {row["method"]: row for row in spec.table(PRODUCT, "client_frames").rows}
        self.mode_fields = {row["mode"]: row["fields"] for row in spec.table(PRODUCT, "mode_fields").rows}
        self.modes = [str(m) for m in spec.vocabulary(f"{PRODUCT}.permission_mode").values]
        self.replies = list(spec.table(PRODUCT, "server_request_replies").rows)
        self.server_requests = {str(m) for m in spec.vocabulary(f"{PRODUCT}.server_request").values}
        self.terminals = list(spec.table(PRODUCT, "terminal_handling").rows)
        example = self.frames["turn/interrupt"]["example"]["params"]
        self.thread_id: str = example["threadId"]  # the ids of the tables, which the fake's steps use
        self.turn_id: str = example["turnId"]

    # ---- expected outcomes

    def allowed(self, scenario: Scenario, run: Json) -> dict[str, list[Json]]:
        """Every outcome part the spec allows for this run ($env in the expectation is the run's)."""
        return {part: [option for option, _ in options] for part, options in self.options(scenario, run).items()}

    def advised(self, scenario: Scenario, run: Json) -> dict[str, list[tuple[Json, tuple[str, ...]]]]:
        """The allowed options that leave a SHOULD unmet, with its IDs, by part."""
        options = self.options(scenario, run)
        return {part: [(o, ids) for o, ids in found if ids] for part, found in options.items()}

    def options(self, scenario: Scenario, run: Json) -> dict[str, list[tuple[Json, tuple[str, ...]]]]:
        """Each part's allowed options, the spec's own first, each with the SHOULDs it leaves unmet."""
        expect = substitute(scenario.expect, {"env": run["env"]})
        spawned = scenario.run.get("executable", "fake") == "fake"
        return {
            "start": self.start(expect["start"], spawned),
            "result": [(r, ()) for r in self.result(expect.get("result"), run["mode"])],
            "dispose": [(d, ()) for d in self.dispose(expect.get("dispose"))],
        }

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

    def observed(self, failure: Json) -> list[tuple[str, tuple[str, ...]]]:
        """A line of a startup rejection with the outcome of the exit that came before rollback,
        and without it: the provider shows what it has observed (CDX-062), and may not have
        observed the exit yet, which leaves CDX-076 unmet."""
        lines: list[tuple[str, tuple[str, ...]]] = [(line, ()) for line in self.lines(failure)]
        if {"exitCode", "signal"} & set(failure) and not failure.get("outcome_optional"):
            lines.append((self.failure_line(failure, with_outcome=False), OBSERVE_EXIT))
        return lines

    def teardown(self, failure: Json, spawned: bool) -> list[tuple[str, tuple[str, ...]]]:
        """A teardown line after a failed wait for the tree (CDX-063, CDX-067): with the outcome
        observed before the teardown; with none observed, without an outcome, or with the one the
        teardown's own termination caused, which the wait (performed, then failed: the tree_wait
        fault) may have observed (CDX-062 lets it appear there)."""
        if {"exitCode", "signal"} & set(failure):
            return self.observed(failure)
        lines: list[tuple[str, tuple[str, ...]]] = [(line, ()) for line in self.lines(failure)]
        if spawned:
            lines += [(self.failure_line({**failure, "signal": s}), ()) for s in TERMINATION_SIGNALS]
        return lines

    def start(self, expected: Json, spawned: bool = True) -> list[tuple[Json, tuple[str, ...]]]:
        """The start() settlements the spec allows, each with the SHOULDs it leaves unmet."""
        if expected == "published":
            return [({"published": True}, ())]
        rejected = expected["rejected"]
        if "plain" in rejected:
            return [({"rejected": self.startup_rows[rejected["plain"]]["plain_error"]}, ())]
        texts = [(self.prefix + line, ids) for line, ids in self.observed(rejected["startup"])]
        if "teardown" in rejected:
            teardowns = [(self.prefix + line, ids) for line, ids in self.teardown(rejected["teardown"], spawned)]
            # An exit the startup line showed was observed: the teardown line shows it too.
            texts = [
                (startup + AGGREGATE_SEPARATOR + teardown, tuple(dict.fromkeys((*a, *b))))
                for (startup, a), (teardown, b) in itertools.product(texts, teardowns)
                if a or not b
            ]
        return [({"rejected": text}, ids) for text, ids in texts]

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
        """The dispose() settlements allowed, the same text each time (CDX-068). A teardown line
        shows an outcome the published run had observed (CDX-067: its result showed it); with none
        observed, it shows none or the termination its performed wait saw."""
        if expected is None:
            return [[]]
        options = [[{"resolved": True}] if s == "resolved" else self.dispose_texts(s["rejected"]) for s in expected]
        if all(s == expected[0] for s in expected):
            return [[option] * len(expected) for option in options[0]]
        return [list(pair) for pair in itertools.product(*options)]

    def dispose_texts(self, failure: Json) -> list[Json]:
        if {"exitCode", "signal"} & set(failure):
            return [{"rejected": self.prefix + line} for line in self.lines(failure)]
        return [{"rejected": self.prefix + line} for line, _ in self.teardown(failure, spawned=True)]

    # ---- what the provider wrote

    def frame_problems(self, scenario: Scenario, run: Json, record: list[Json]) -> list[Problem]:
        """Every way the client frames of a run differ from table client_frames (CDX-053), the
        thread/start mode fields (CDX-054), the turn/start task (CDX-057) and the turn/interrupt
        of a local cancellation (CDX-017)."""
        sent = [line["stdin"] for line in record if "stdin" in line and "method" in line["stdin"]]
        problems = []
        methods = [frame.get("method") for frame in sent]
        if methods not in self.frame_sequences(scenario):
            others = [m for m in methods if m != INTERRUPT]
            owner = ("CDX-017",) if others == [m for m in scenario.expect["frames"] if m != INTERRUPT] else ("CDX-053",)
            problems.append(
                Problem(
                    owner,
                    f"the provider wrote {methods}, the scenario expects {scenario.expect['frames']}",
                    (scenario.expect["frames"], methods),
                )
            )
        ids = [frame["id"] for frame in sent if "id" in frame]
        if len(ids) != len(set(map(json.dumps, ids))):
            problems.append(Problem(("CDX-053",), f"request ids are reused on the connection: {ids}"))
        thread_id, turn_id = self.ids(scenario, run)
        owners = {"thread/start": ("CDX-054",), "turn/start": ("CDX-057",), "turn/interrupt": ("CDX-017",)}
        for frame in sent:
            expected = self.expected_frame(frame.get("method"), run, thread_id, turn_id)
            if expected is None:
                continue
            shape = {k: v for k, v in frame.items() if k != "id"}
            if shape != expected:
                problems.append(
                    Problem(
                        owners.get(frame["method"], ("CDX-053",)),
                        f"the provider wrote {json.dumps(frame)}; client_frames says {json.dumps(expected)}",
                        (expected, shape),
                    )
                )
            row = self.frames[frame["method"]]
            is_request = row["kind"] == "request"
            if is_request != ("id" in frame) or (is_request and not isinstance(frame["id"], str | int)):
                problems.append(
                    Problem(("CDX-053",), f"{frame['method']} is a {row['kind']}, but its id is {frame.get('id')!r}")
                )
        return problems

    def frame_sequences(self, scenario: Scenario) -> list[list[str]]:
        """The frame sequences the scenario allows: its own, and, once the fake committed a turn
        and no interrupt is expected, the same ended by one turn/interrupt, which CDX-017's
        decision lets dispose() send after the turn settled (upstream does, out-of-process.ts:242-247)."""
        expected = list(scenario.expect["frames"])
        if INTERRUPT in expected or not self.commits_turn(scenario):
            return [expected]
        return [expected, [*expected, INTERRUPT]]

    @staticmethod
    def commits_turn(scenario: Scenario) -> bool:
        """Whether the fake answers turn/start with a turn (the turn_start step, or its own response)."""
        for action in scenario.actions:
            out = action.get("out")
            result = out.get("result") if isinstance(out, dict) else None
            answered = isinstance(result, dict) and isinstance(result.get("turn"), dict)
            if action.get("step") == "turn_start" or answered:
                return True
        return False

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

    def reply_problems(self, scenario: Scenario, record: list[Json]) -> list[Problem]:
        """Each server request that is a row of server_request_replies is answered as the row
        says, blamed on the row's covers; once, at once (CDX-031), as JSON-RPC 2.0 (CDX-035)."""
        replies = [line["stdin"] for line in record if "stdin" in line and "method" not in line["stdin"]]
        problems = []
        for action in scenario.actions:
            frame = action.get("out")
            if not (isinstance(frame, dict) and "id" in frame and "method" in frame):
                continue
            rows = self.reply_rows(frame)
            if not rows:
                continue
            answers = [r for r in replies if r.get("id") == frame["id"] and type(r.get("id")) is type(frame["id"])]
            if len(answers) != 1:
                problems.append(
                    Problem(
                        ("CDX-031",) if not answers else ("CDX-035",),
                        f"request {frame['id']!r} ({frame['method']}) got {len(answers)} replies: {answers}",
                        ({"replies to request": frame["id"], "count": 1}, {"replies": answers, "count": len(answers)}),
                    )
                )
                continue
            [answer] = answers
            want = rows[0]["reply"]
            got = {k: v for k, v in answer.items() if k in ("result", "error")}
            if "error" in got and isinstance(got["error"], dict):
                got["error"] = {"code": got["error"].get("code")}
            if got != want:
                problems.append(
                    Problem(
                        tuple(rows[0]["covers"]),
                        f"request {frame['id']!r} ({rows[0]['name']}) was answered {answer}, the row says {want}",
                        (want, got),
                    )
                )
            elif answer.get("jsonrpc") != "2.0":
                problems.append(Problem(("CDX-035",), f"request {frame['id']!r} was answered without jsonrpc 2.0"))
        return problems

    def reply_rows(self, frame: Json) -> list[Json]:
        """The rows of server_request_replies a server request the fake sends is (for any unsupported
        method: the rows of unsupported methods)."""
        rows = [r for r in self.replies if r["method"] == frame["method"] and r["params"] == frame["params"]]
        if not rows and frame["method"] not in self.server_requests:
            rows = [r for r in self.replies if r["method"] not in self.server_requests]
        return rows


_ORACLES: dict[int, ProcessOracle] = {}


def oracle(spec: Spec) -> ProcessOracle:
    """The oracle of ``spec``, built once."""
    if id(spec) not in _ORACLES:
        _ORACLES[id(spec)] = ProcessOracle(spec)
    return _ORACLES[id(spec)]


def generated_scenarios(spec: Spec) -> list[Scenario]:
    """Every Codex scenario is in the scenario file (the variants as a template over their table)."""
    return []


def allowed_outcomes(spec: Spec, scenario: Scenario, run: Json) -> dict[str, list[Json]]:
    return oracle(spec).allowed(scenario, run)


def advised_outcomes(spec: Spec, scenario: Scenario, run: Json) -> dict[str, list[tuple[Json, tuple[str, ...]]]]:
    return oracle(spec).advised(scenario, run)


def protocol_problems(spec: Spec, planned: PlannedRun, record: list[Json]) -> list[Problem]:
    """The replies to the fake's server requests and the client frames the provider wrote."""
    problems = oracle(spec).reply_problems(planned.scenario, record) if record else []
    if "frames" in planned.scenario.expect:
        problems += oracle(spec).frame_problems(planned.scenario, planned.run, record)
    return problems


def complete_row(spec: Spec, table: str, row: Json, expect: Json) -> None:
    """What a row of table variants adds to a failed terminal's expectation: the kept HTTP status
    (CDX-004, read as http_status_forms says) and the permission fact terminal_handling records."""
    if table != "variants":
        return
    result = expect["result"]
    if row["keeps_http_status"]:
        [detail] = row["wire"].values()
        status = js_uint16(detail.get("httpStatusCode"))
        if status is not None:
            result["failure"]["httpStatus"] = status
    if any(t["permission_fact"] and t.get("category") == row["variant"] for t in oracle(spec).terminals):
        result["permission"] = {"trigger": row["variant"]}
