"""The oracle for claude_code_outcome, built from spec/claude-code.yaml and the diagnostic grammar.

It decides a scenario with the rows of `result_classification` (looked up by name, so stage,
category and stop reason are the table's), records facts from `permission_facts`, reads
blankness from `js_whitespace`, and writes the diagnostic by generating the sentence of the
grammar root (diagnostic.yaml `grammar`, `grammar_roots`) that carries those values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
PRODUCT = "Claude Code"
NATIVE_DENIAL = "system/permission_denied"

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
