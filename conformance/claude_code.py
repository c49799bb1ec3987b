"""Strategies and the oracle for claude_code_outcome, built from spec/claude-code.yaml.

The oracle decides a scenario with the rows of `result_classification` (looked up by name,
so stage, category and stop reason are the table's), records facts from `permission_facts`,
reads blankness from `js_whitespace`, and writes the diagnostic by generating the sentence
of the grammar root (diagnostic.yaml `grammar`, `grammar_roots`) that carries those values.
The strategies draw SDK messages, callbacks, exceptions and process outcomes, valid and
hostile, and can plant canaries in every raw field the scenario format has.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.texts import any_text

Json = dict[str, Any]
PRODUCT = "Claude Code"
NATIVE_DENIAL = "system/permission_denied"
MAX_EXIT_CODE = 4294967295

# --------------------------------------------------------------------------- the spec's tables


@dataclass(frozen=True)
class ClaudeTables:
    """The claude-code.yaml data the oracle and the strategies use, read once per spec."""

    classification: dict[str, Json]  # result_classification rows by name
    error_rows: dict[str, Json]  # step-2 rows of the four error subtypes, by category
    facts: dict[str, Json]  # permission_facts rows by trigger
    stop_reasons: dict[str, Json]  # stop_reasons rows by stop reason
    stages: dict[str, Json]  # stages rows by stage
    error_subtypes: tuple[str, ...]
    result_subtypes: tuple[str, ...]
    modes: tuple[str, ...]
    signals: tuple[str, ...]
    whitespace: frozenset[str]  # js_whitespace, as characters
    strip_only: tuple[str, ...]  # stripped by Python's str.strip() but not by JS trim()
    js_only: tuple[str, ...]  # stripped by JS trim() but not by Python's str.strip()
    callbacks: tuple[str, ...]  # triggers the SDK delivers as callbacks (they have an answer)


_TABLES: dict[int, ClaudeTables] = {}


def tables(spec: Any) -> ClaudeTables:
    cached = _TABLES.get(id(spec))
    if cached is not None:
        return cached
    area = "claude-code"
    rows = spec.table(area, "result_classification").rows
    errors = tuple(str(v) for v in spec.vocabulary(f"{area}.error_subtype").values)
    facts = {r["trigger"]: r for r in spec.table(area, "permission_facts").rows}
    disagreements = spec.table(area, "strip_disagreements").rows
    built = ClaudeTables(
        classification={r["name"]: r for r in rows},
        error_rows={r["category"]: r for r in rows if r["step"] == 2 and r.get("category") in errors},
        facts=facts,
        stop_reasons={r["stop_reason"]: r for r in spec.table(area, "stop_reasons").rows},
        stages={r["stage"]: r for r in spec.table(area, "stages").rows},
        error_subtypes=errors,
        result_subtypes=tuple(str(v) for v in spec.vocabulary(f"{area}.result_subtype").values),
        modes=tuple(str(v) for v in spec.vocabulary(f"{area}.permission_mode").values),
        signals=tuple(str(v) for v in spec.vocabulary("diagnostic.signal").values),
        whitespace=frozenset(chr(int(cp)) for cp in spec.vocabulary(f"{area}.js_whitespace").values),
        strip_only=tuple(
            chr(r["codepoint"]) for r in disagreements if r["python_strip_strips"] and not r["js_trim_strips"]
        ),
        js_only=tuple(
            chr(r["codepoint"]) for r in disagreements if r["js_trim_strips"] and not r["python_strip_strips"]
        ),
        callbacks=tuple(t for t, r in facts.items() if r["answer"] is not None),
    )
    _TABLES[id(spec)] = built
    return built


# --------------------------------------------------------------------------- sentences of the grammar


class _NoSentence(Exception):
    """The values given do not fill this part of the grammar."""


def render(spec: Any, symbol: str, values: Json) -> str:
    """The sentence of grammar ``symbol`` that carries ``values``.

    ``values`` maps a vocabulary reference (``claude-code.permission_mode``), a table column
    name (``stage``, ``categories``, ``request``...) or ``"integer"`` to the value to print, or
    to None when there is none; an optional part is printed exactly when its values are given.
    """
    rules: dict[str, list[list[Any]]] = {}
    for row in spec.table("diagnostic", "grammar").rows:
        rules.setdefault(row["symbol"], []).append(row["sequence"])

    def sequence(items: list[Any], row: Json | None) -> str:
        return "".join(item(i, row) for i in items)

    def first(alternatives: list[list[Any]], row: Json | None) -> str:
        for alternative in alternatives:
            try:
                return sequence(alternative, row)
            except _NoSentence:
                continue
        raise _NoSentence

    def item(it: Json, row: Json | None) -> str:
        kind: str
        value: Any
        kind, value = next(iter(it.items())) if len(it) == 1 else ("column", it)
        if kind == "literal":
            return str(value)
        if kind == "vocab":
            wanted = values.get(value)
            if wanted is None or wanted not in spec.vocabulary(value).values:
                raise _NoSentence
            return str(wanted)
        if kind == "integer":
            number = values.get("integer")
            if number is None or not value["minimum"] <= number <= value["maximum"]:
                raise _NoSentence
            return str(number)
        if kind == "symbol":
            return first(rules[value], row)
        if kind == "optional":
            try:
                return sequence(value, row)
            except _NoSentence:
                return ""
        if kind == "choice":
            return first(value, row)
        if kind == "row":
            area, _, name = value["table"].partition(".")
            for candidate in spec.table(area, name).rows:
                try:
                    return sequence(value["sequence"], candidate)
                except _NoSentence:
                    continue
            raise _NoSentence
        assert row is not None, f"grammar item {it!r} outside a row"
        cell, wanted = row[it["column"]], values.get(it["column"])
        if wanted is None or wanted not in (cell if isinstance(cell, list) else [cell]):
            raise _NoSentence
        return str(wanted)

    return first(rules[symbol], None)


def root_symbol(spec: Any, kind: str) -> str:
    [symbol] = [
        r["symbol"]
        for r in spec.table("diagnostic", "grammar_roots").rows
        if r["product"] == PRODUCT and r["kind"] == kind
    ]
    return str(symbol)


# --------------------------------------------------------------------------- the oracle


def js_truthy(value: Any) -> bool:
    """CC-011: anything but false, 0, "", null or absent is truthy (an empty array or object is)."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return bool(value != 0)
    return bool(value != "")


def classify_result(t: ClaudeTables, message: Json) -> str | None:
    """The step-2 row a result message falls under, or None for a strict success."""
    subtype = message.get("subtype")
    if isinstance(subtype, str) and subtype in t.error_subtypes:
        if isinstance(message.get("errors"), list):
            return str(t.error_rows[subtype]["name"])
        return "error-subtype-without-errors-array"
    if subtype != "success":
        return "unknown-subtype"
    if js_truthy(message.get("is_error")):
        return "success-marked-error"
    result = message.get("result")
    if not isinstance(result, str):
        return "success-non-string-result"
    if all(char in t.whitespace for char in result):
        return "success-blank-result"
    return None


@dataclass(frozen=True)
class Decision:
    """What the oracle decided: the classification row, the answer, the latest permission fact."""

    row: Json
    answer: str | None
    fact: Json | None


def decide(spec: Any, scenario: Json) -> Decision:
    """Walk the scenario as result_classification says: first failing result, else the stream's end."""
    t = tables(spec)
    mode = scenario["mode"]
    fact: Json | None = None
    answer: str | None = None
    seen_result = False
    failed: str | None = None
    for event in scenario["events"]:
        if "callback" in event:
            row = t.facts[event["callback"]]
            if mode in row["modes"]:
                fact = row
            continue
        message = event["message"]
        if message["type"] == "system" and message.get("subtype") == "permission_denied":
            row = t.facts[NATIVE_DENIAL]
            if mode in row["modes"]:
                fact = row
            continue
        if message["type"] != "result":
            continue
        seen_result = True
        failed = classify_result(t, message)
        if failed is not None:
            break
        answer = message["result"]
    if scenario.get("cancelled", False):
        name = "local-cancellation"
    elif failed is not None:
        name = failed
    elif "exception" in scenario:
        observed = scenario.get("outcome") is not None
        name = "exception-after-result" if seen_result else "process-exit" if observed else "exception-without-outcome"
    else:
        name = "strict-success" if seen_result else "missing-result"
    return Decision(t.classification[name], answer, fact)


def _exit_code(value: Any) -> int | None:
    """DIA-006: an integral number (23.0 is 23), never a boolean; None when not observed."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        return None
    return int(value)


def expected_diagnostic(spec: Any, scenario: Json, decision: Decision) -> str:
    """The run-result sentence: the row's stage and category, the observed outcome, the fact."""
    outcome = scenario.get("outcome") or {}
    values: Json = {
        "stage": decision.row["stage"],
        "categories": decision.row["category"],
        "integer": _exit_code(outcome.get("exitCode")),
        "diagnostic.signal": outcome.get("signal"),
    }
    if decision.fact is not None:
        values["claude-code.permission_mode"] = scenario["mode"]
        values.update({k: decision.fact[k] for k in ("request", "decision", "reason")})
    return render(spec, root_symbol(spec, "run-result"), values)


def expected_outcome(spec: Any, scenario: Json) -> Json:
    """The settled result the spec gives for a scenario."""
    decision = decide(spec, scenario)
    stop = decision.row["stop_reason"]
    if stop == "completed":
        assert decision.answer is not None
        return {"stopReason": stop, "output": [{"type": "text", "text": decision.answer}]}
    result: Json = {"stopReason": stop, "output": []}
    if tables(spec).stop_reasons[stop]["diagnostic"]:
        result["diagnostic"] = expected_diagnostic(spec, scenario, decision)
    return result


def explain(spec: Any, scenario: Json, actual: Json) -> str:
    """A failure message that names the classification row and requirement of the expectation."""
    decision = decide(spec, scenario)
    return (
        f"claude_code_outcome gave {actual!r}, the spec says {expected_outcome(spec, scenario)!r} "
        f"(result_classification row {decision.row['name']!r}"
        + (f", latest permission fact {decision.fact['trigger']!r}" if decision.fact else "")
        + f") for scenario {scenario!r}"
    )


# --------------------------------------------------------------------------- strategies

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([0.0, 1.5, -0.0]), any_text(max_size=6)
)
json_values = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(any_text(max_size=5), inner, max_size=3)),
    max_leaves=5,
)
# Truthy and falsy by JavaScript rules, with the Python/JS disagreements ([], {}, "0", 0.0).
IS_ERROR_VALUES = [True, False, 0, 1, -1, 0.0, 2.5, "", "0", "false", " ", [], {}, [0], None]
ODD_SUBTYPES = [
    "future_failure",
    "Success",
    "success ",
    " success",
    "SUCCESS",
    "Error_Max_Turns",
    "error_max_turns ",
    "error-max-turns",
    "errorMaxTurns",
    "",
    "error",
    "error_during_execution\n",
]


def whitespace_text(spec: Any, *, max_size: int = 6) -> st.SearchStrategy[str]:
    """Strings made of JS whitespace and of the code points where Python's strip() disagrees."""
    t = tables(spec)
    pool = sorted(t.whitespace | set(t.strip_only))
    return st.text(alphabet=st.sampled_from(pool), max_size=max_size)


def result_texts(spec: Any) -> st.SearchStrategy[str]:
    return st.one_of(any_text(max_size=12), whitespace_text(spec), st.just("answer"))


def subtypes(spec: Any) -> st.SearchStrategy[Any]:
    """Mostly the five declared subtypes; also near misses, any string, any JSON value."""
    declared = st.sampled_from(tables(spec).result_subtypes)
    return weighted((6, declared), (2, st.sampled_from(ODD_SUBTYPES)), (1, any_text(max_size=8)), (1, json_values))


_ABSENT = object()


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Draw from each strategy in proportion to its weight (st.one_of weighs its branches alike)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


def _put(message: Json, key: str, value: Any) -> None:
    if value is not _ABSENT:
        message[key] = value


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, or (one time in five) the key left out."""
    return weighted((4, strategy), (1, st.just(_ABSENT)))


EXTRA_RESULT_FIELDS = st.dictionaries(
    st.sampled_from(
        [
            "stop_reason",
            "terminal_reason",
            "num_turns",
            "usage",
            "total_cost_usd",
            "api_error_status",
            "permission_denials",
            "structured_output",
            "session_id",
            "uuid",
            "duration_ms",
            "future_field",
        ]
    ),
    json_values,
    max_size=3,
)


def result_messages(spec: Any) -> st.SearchStrategy[Json]:
    """Any result message: every subtype and odd ones, JS-truthy and falsy is_error, any errors and result."""
    fields = st.fixed_dictionaries(
        {
            "subtype": _maybe(subtypes(spec)),
            "is_error": _maybe(st.sampled_from(IS_ERROR_VALUES)),
            "errors": _maybe(st.one_of(st.lists(any_text(max_size=8), max_size=3), json_values)),
            "result": _maybe(weighted((3, result_texts(spec)), (1, json_values))),
        }
    )
    return st.builds(
        lambda extra, read: {**extra, "type": "result", **{k: v for k, v in read.items() if v is not _ABSENT}},
        EXTRA_RESULT_FIELDS,
        fields,
    )


def strict_successes(spec: Any) -> st.SearchStrategy[Json]:
    non_blank = result_texts(spec).filter(lambda s: not all(c in tables(spec).whitespace for c in s))
    return st.builds(
        lambda text, is_error, extra: {"type": "result", "subtype": "success", **is_error, "result": text, **extra},
        non_blank,
        st.sampled_from([{"is_error": False}, {}, {"is_error": 0}, {"is_error": None}, {"is_error": ""}]),
        EXTRA_RESULT_FIELDS,
    )


def error_results(spec: Any) -> st.SearchStrategy[Json]:
    return st.builds(
        lambda subtype, is_error, errors: {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "errors": errors,
        },
        st.sampled_from(tables(spec).error_subtypes),
        st.booleans(),
        st.lists(any_text(max_size=8), max_size=2),
    )


def native_denials() -> st.SearchStrategy[Json]:
    return st.builds(
        lambda fields: {"type": "system", "subtype": "permission_denied", **fields},
        st.fixed_dictionaries(
            {},
            optional={
                "tool_name": any_text(max_size=6),
                "tool_use_id": any_text(max_size=6),
                "decision_reason_type": any_text(max_size=6),
                "decision_reason": any_text(max_size=6),
                "message": any_text(max_size=6),
                "uuid": any_text(max_size=6),
                "session_id": any_text(max_size=6),
            },
        ),
    )


def other_messages() -> st.SearchStrategy[Json]:
    """Messages that are not results: ignored, including near misses of the two that count."""
    return st.one_of(
        st.just({"type": "system", "subtype": "init", "claude_code_version": "2.1.220"}),
        st.builds(
            lambda error: {"type": "assistant", "error": error, "message": {"role": "assistant", "content": []}},
            st.sampled_from(["rate_limit", "server_error", "authentication_failed", "unknown"]),
        ),
        st.just({"type": "system", "subtype": "api_retry", "attempt": 1, "error_status": 500, "error": "server_error"}),
        st.just({"type": "user", "message": {"role": "user", "content": "hi"}}),
        st.just({"type": "stream_event", "event": {"type": "message_stop"}}),
        st.sampled_from(
            [
                {"type": "System", "subtype": "permission_denied"},
                {"type": "system", "subtype": "Permission_Denied"},
                {"type": "system", "subtype": "permission_denied "},
                {"type": "Result", "subtype": "error_max_turns", "errors": []},
                {"type": "result ", "subtype": "success", "is_error": True},
                {"type": "results", "subtype": "success", "result": ""},
            ]
        ),
        st.builds(
            lambda kind, extra: {"type": kind, **extra},
            any_text(max_size=8).filter(lambda s: s != "result"),
            st.dictionaries(any_text(max_size=4).filter(lambda k: k != "type"), json_values, max_size=2),
        ),
    )


def callbacks(spec: Any) -> st.SearchStrategy[Json]:
    return st.builds(lambda name: {"callback": name}, st.sampled_from(tables(spec).callbacks))


def permission_events(spec: Any) -> st.SearchStrategy[Json]:
    """A permission trigger: a callback the SDK invokes, or a native denial message."""
    return st.one_of(callbacks(spec), st.builds(lambda m: {"message": m}, native_denials()))


def events(spec: Any, *, max_size: int = 6) -> st.SearchStrategy[list[Json]]:
    message = weighted(
        (2, result_messages(spec)),
        (2, strict_successes(spec)),
        (1, error_results(spec)),
        (1, native_denials()),
        (1, other_messages()),
    )
    event = weighted((3, st.builds(lambda m: {"message": m}, message)), (1, callbacks(spec)))
    return st.lists(event, max_size=max_size)


def exit_codes() -> st.SearchStrategy[int | None]:
    return st.one_of(st.none(), st.just(0), st.integers(1, 255), st.integers(0, MAX_EXIT_CODE), st.just(MAX_EXIT_CODE))


def outcomes(spec: Any) -> st.SearchStrategy[Json]:
    """A process outcome: exit code and signal, both, either or neither (exit code 0 included)."""
    return st.builds(
        lambda code, signal: {"exitCode": code, "signal": signal},
        exit_codes(),
        st.one_of(st.none(), st.sampled_from(tables(spec).signals)),
    )


EXCEPTION_MESSAGES = st.one_of(
    any_text(max_size=10),
    st.sampled_from(
        [
            "Claude Code process exited with code 23",
            "Claude Code process terminated by signal SIGKILL",
            "category: error_max_turns",
            "HTTP status: 500",
        ]
    ),
)


def scenarios(
    spec: Any,
    *,
    event_lists: st.SearchStrategy[list[Json]] | None = None,
    cancelled: st.SearchStrategy[bool] | None = None,
) -> st.SearchStrategy[Json]:
    """A whole observed run: mode, events, maybe an exception, maybe an outcome, maybe cancelled."""
    required: dict[str, st.SearchStrategy[Any]] = {
        "mode": st.sampled_from(tables(spec).modes),
        "events": event_lists if event_lists is not None else events(spec),
    }
    optional: dict[str, st.SearchStrategy[Any]] = {
        "exception": st.builds(lambda text: {"message": text}, EXCEPTION_MESSAGES),
        "outcome": st.one_of(st.none(), outcomes(spec)),
    }
    if cancelled is None:
        optional["cancelled"] = st.booleans()
    else:
        required["cancelled"] = cancelled
    return st.fixed_dictionaries(required, optional=optional)


# --------------------------------------------------------------------------- canaries

CANARY_PATTERN = re.compile(r"SECRET_[0-9a-f]{8}")
_HEX = st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)
_SHAPES = st.sampled_from(["token", "path", "sentence", "spelled"])


@dataclass
class Canaries:
    """Canary strings handed out while a scenario is drawn, and their decoy twins."""

    made: list[str]

    def __init__(self) -> None:
        self.made = []

    def token(self, draw: st.DrawFn, *, shape: str | None = None) -> str:
        secret = f"SECRET_{draw(_HEX)}"
        kind = shape or draw(_SHAPES)
        text = {
            "token": secret,
            "path": f"/private/{secret}/secret.txt",
            "sentence": f"command with {secret} was denied",
            # a canary that spells grammar parts, so a copy of it could pass a loose check
            "spelled": f"error_max_turns; exit code: 23; signal: SIGKILL) {secret}",
        }[kind]
        self.made.append(secret)
        return text


# Values that replace canaries in the twin scenario: non-blank, never a vocabulary value, never
# "result", "system" or "permission_denied", so every read of structured_inputs stays the same.
DECOYS = [
    "x",
    "Product subagent failure (product: Claude Code; stage: process; category: process-exit; exit code: 23)",
    "Claude Code unattended decision (mode: dontAsk; request: tool permission; decision: denied): no",
    "Error_Max_Turns",
    "exit code: 0; signal: SIGTERM",
]


def replace_canaries(value: Any, decoy: str) -> Any:
    """The same JSON value with every canary (in keys and strings) replaced by ``decoy``."""
    if isinstance(value, str):
        return CANARY_PATTERN.sub(decoy, value)
    if isinstance(value, list):
        return [replace_canaries(v, decoy) for v in value]
    if isinstance(value, dict):
        return {replace_canaries(k, decoy): replace_canaries(v, decoy) for k, v in value.items()}
    return value


def _planted_fields(draw: st.DrawFn, canaries: Canaries, names: list[str]) -> Json:
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    fields: Json = {name: canaries.token(draw) for name in chosen}
    if draw(st.booleans()):
        fields[canaries.token(draw, shape="token")] = canaries.token(draw)  # a hostile field name
    return fields


PERMISSION_DENIED_FIELDS = [
    "tool_name",
    "tool_use_id",
    "decision_reason_type",
    "decision_reason",
    "message",
    "uuid",
    "session_id",
]


def _raw_extras(draw: st.DrawFn, c: Canaries) -> Json:
    """Canaries in result fields classification never reads (CC-005)."""
    names = draw(st.lists(st.sampled_from(["api_error_status", "terminal_reason", "stop_reason", "uuid"]), unique=True))
    return {name: c.token(draw) for name in names}


def _site_sdk_result_errors(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    subtype = draw(st.sampled_from(tables(spec).error_subtypes))
    shape = draw(st.sampled_from(["array", "array", "string", "object"]))
    errors: Any = [c.token(draw) for _ in range(draw(st.integers(1, 3)))]
    if shape == "string":  # not an array: unknown, still never copied
        errors = c.token(draw)
    elif shape == "object":
        errors = {c.token(draw, shape="token"): c.token(draw)}
    message = {"type": "result", "subtype": subtype, "is_error": True, "errors": errors, **_raw_extras(draw, c)}
    if draw(st.booleans()):
        message["result"] = c.token(draw)
    return [{"message": message}]


def _site_unknown_subtype(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    errors = [c.token(draw)] if draw(st.booleans()) else []
    message = {"type": "result", "subtype": c.token(draw), "is_error": True, "errors": errors}
    return [{"message": {**message, **_raw_extras(draw, c)}}]


def _site_invalid_success_result(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    is_error = draw(st.sampled_from([True, 1, "yes", [], {}, "canary"]))
    if is_error == "canary":  # a non-empty string is truthy whatever it says
        is_error = c.token(draw)
    message = {"type": "result", "subtype": "success", "is_error": is_error, "result": c.token(draw)}
    return [{"message": {**message, **_raw_extras(draw, c)}}]


def _site_permission_denied_fields(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    fields = _planted_fields(draw, c, PERMISSION_DENIED_FIELDS)
    return [{"message": {"type": "system", "subtype": "permission_denied", **fields}}]


def _site_sdk_message_payload(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    kind = draw(st.sampled_from(["init", "assistant", "tool_use", "session", "type"]))
    if kind == "init":
        message: Json = {
            "type": "system",
            "subtype": "init",
            "cwd": c.token(draw, shape="path"),
            "session_id": c.token(draw),
        }
    elif kind == "assistant":
        message = {
            "type": "assistant",
            "error": c.token(draw),
            "message": {"role": "assistant", "content": [{"type": "text", "text": c.token(draw)}]},
        }
    elif kind == "tool_use":
        message = {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": c.token(draw),
                        "name": "Write",
                        "input": {"file_path": c.token(draw, shape="path"), "content": c.token(draw)},
                    }
                ],
            },
        }
    elif kind == "session":
        message = {"type": "system", "subtype": c.token(draw), "session_id": c.token(draw)}
    else:
        message = {"type": c.token(draw), **_planted_fields(draw, c, ["subtype", "result", "errors"])}
    return [{"message": message}]


def _site_can_use_tool_input(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    tool_input = {"file_path": c.token(draw, shape="path"), "command": c.token(draw)}
    options = {"toolUseID": c.token(draw), "decisionReason": c.token(draw)}
    arguments = {"toolName": c.token(draw, shape="token"), "input": tool_input, "options": options}
    return [{"callback": "canUseTool", "arguments": arguments}]


def _site_elicitation_request(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    request = {"serverName": c.token(draw), "message": c.token(draw), "requestedSchema": {c.token(draw): {}}}
    return [{"callback": "onElicitation", "arguments": request}]


def _site_dialog_payload(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    payload = {"title": c.token(draw), "body": c.token(draw, shape="path"), "options": [c.token(draw)]}
    return [{"callback": "onUserDialog", "arguments": payload}]


def _site_iterator_exception_message(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    return []  # planted by the scenario builder as the exception's message


# How each canary_sites row of Claude Code is planted through claude_code_outcome.
PLANTERS: dict[str, Callable[[st.DrawFn, Any, Canaries], list[Json]]] = {
    "sdk-result-errors": _site_sdk_result_errors,
    "unknown-subtype": _site_unknown_subtype,
    "invalid-success-result": _site_invalid_success_result,
    "permission-denied-fields": _site_permission_denied_fields,
    "sdk-message-payload": _site_sdk_message_payload,
    "iterator-exception-message": _site_iterator_exception_message,
    "can-use-tool-input": _site_can_use_tool_input,
    "elicitation-request": _site_elicitation_request,
    "dialog-payload": _site_dialog_payload,
}


def outcome_sites(spec: Any) -> list[str]:
    """The Claude Code canary_sites rows a claude_code_outcome test must plant."""
    return [
        r["site"]
        for r in spec.table("redaction", "canary_sites").rows
        if r["product"] == PRODUCT and "claude_code_outcome" in r["plant_via"]
    ]


def planted_scenarios(spec: Any, site: str | None = None) -> st.SearchStrategy[tuple[Json, list[str], list[str]]]:
    """A scenario with canaries planted at some canary sites (always at ``site`` when given);
    also the canaries and the sites."""
    site_lists = st.lists(st.sampled_from(sorted(PLANTERS)), min_size=1, max_size=4, unique=True)
    if site is not None:
        site_lists = site_lists.map(lambda sites: [site, *(s for s in sites if s != site)][:4])
    fillers = st.lists(
        st.one_of(permission_events(spec), st.builds(lambda m: {"message": m}, other_messages())), max_size=2
    )
    tails = st.sampled_from([[], [{"message": {"type": "result", "subtype": "success", "result": "done"}}]])
    modes = st.sampled_from(tables(spec).modes)
    observed = st.one_of(st.just(_ABSENT), st.none(), outcomes(spec))

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Json, list[str], list[str]]:
        c = Canaries()
        sites = draw(site_lists)
        planted: list[list[Json]] = [PLANTERS[site](draw, spec, c) for site in sites]
        # Shuffle the planted groups with the filler, and maybe end with a success result.
        groups = draw(st.permutations([*planted, *[[e] for e in draw(fillers)]]))
        scenario: Json = {"mode": draw(modes), "events": [e for group in groups for e in group] + draw(tails)}
        if "iterator-exception-message" in sites or draw(st.booleans()):
            exception = f"{c.token(draw)} from process transport at {c.token(draw, shape='path')}"
            scenario["exception"] = {"message": exception}
        _put(scenario, "outcome", draw(observed))
        return scenario, c.made, sites

    return build()
