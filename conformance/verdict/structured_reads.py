"""Which tests exercise each read of redaction.yaml table ``structured_inputs``.

A row of that table is one observation a provider text may depend on and how it is read. A test
exercises the read when the rows it already reaches (its ``reaches`` markers, conformance/verdict/reach.py)
feed the provider that observation through a public operation and check the resulting texts: a
vector whose events carry the observation, or a table row whose trigger is the observation.
:data:`READS` says, per structured_inputs row (product and input, as the spec words them), which
rows of which tables do; :func:`implied` turns a test's reached rows into the structured_inputs
rows it reaches as well. Rows are matched by their content, never by index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from conformance.spec import Spec

Json = Any
Row = dict[str, Any]
Match = Callable[[Spec, Row], bool]  # (the spec, a row of the source table)


def _events(row: Row) -> list[Json]:
    return list(row["scenario"].get("events", []))


def _messages(row: Row) -> list[Json]:
    return [e["message"] for e in _events(row) if isinstance(e.get("message"), dict)]


def _frames(row: Row) -> list[Json]:
    return [e["frame"] for e in _events(row) if isinstance(e.get("frame"), dict)]


def _results(row: Row) -> list[Json]:
    return [m for m in _messages(row) if m.get("type") == "result"]


def _get(value: Json, key: str) -> Json:
    """``value[key]`` where value is an object (hostile vectors put other JSON in object fields)."""
    return value.get(key) if isinstance(value, dict) else None


def _turn_completed(row: Row) -> list[Json]:
    return [_get(_get(f, "params"), "turn") for f in _frames(row) if f.get("method") == "turn/completed"]


def _has_event(key: str) -> Match:
    return lambda spec, row: any(key in e for e in _events(row))


def _every(spec: Spec, row: Row) -> bool:
    return True


def _startup(orders: range) -> Match:
    """startup_rejections rows by evaluation order (1-3: working directory and task; 4-5: the
    provider's own cancellation and startup/rollback failures)."""
    return lambda spec, row: int(row["order"]) in orders


CC, CDX = "Claude Code", "Codex"
# (product, input) -> [(area.table, which rows of it exercise the read)], each with why.
READS: dict[tuple[str, str], list[tuple[str, Match]]] = {
    # Every SDK message of a vector is classified by its type (and a system message by subtype).
    (CC, "SDK message `type`, and `subtype` of a system message"): [
        ("claude-code.outcome_vectors", lambda s, r: bool(_messages(r))),
    ],
    # A result message's subtype selects the classification row.
    (CC, "Result message `subtype`"): [("claude-code.outcome_vectors", lambda s, r: bool(_results(r)))],
    # The errors array is checked (is it an array) for a known error subtype (claude-code.error_subtype).
    (CC, "Result message `errors` (error subtypes)"): [
        (
            "claude-code.outcome_vectors",
            lambda s, r: any(m.get("subtype") in s.vocabulary("claude-code.error_subtype").values for m in _results(r)),
        ),
    ],
    # is_error and result are read only for subtype success.
    (CC, "Result message `is_error` (subtype success)"): [
        ("claude-code.outcome_vectors", lambda s, r: any(m.get("subtype") == "success" for m in _results(r))),
    ],
    # The result text is read only once is_error was falsy.
    (CC, "Result message `result` (subtype success)"): [
        (
            "claude-code.outcome_vectors",
            lambda s, r: any(m.get("subtype") == "success" and not m.get("is_error") for m in _results(r)),
        ),
    ],
    # A callback event invokes canUseTool, onElicitation or onUserDialog.
    (CC, "Permission callbacks"): [("claude-code.outcome_vectors", _has_event("callback"))],
    # A vector whose stream ends with an exception, or without any result message.
    (CC, "End of the SDK message stream"): [
        ("claude-code.outcome_vectors", lambda s, r: "exception" in r["scenario"] or not _results(r)),
    ],
    (CC, "Task and parent working directory"): [("claude-code.startup_rejections", _startup(range(1, 4)))],
    # A vector with an observed process outcome (exit code, signal).
    (CC, "Managed process outcome"): [("claude-code.outcome_vectors", lambda s, r: "outcome" in r["scenario"])],
    # Local cancellation (vectors marked cancelled) and the provider's own startup and cleanup steps.
    (
        CC,
        "The provider's own state: the operation that failed, the configured permission mode, "
        "local cancellation, and failures of its own cleanup steps",
    ): [
        ("claude-code.outcome_vectors", lambda s, r: bool(r["scenario"].get("cancelled"))),
        ("claude-code.startup_rejections", _startup(range(4, 6))),
    ],
    (CDX, "turn/completed `params.turn.status`"): [("codex.outcome_vectors", lambda s, r: bool(_turn_completed(r)))],
    # A failed turn/completed carries a TurnError whose codexErrorInfo is mapped.
    (CDX, "turn/completed `params.turn.error` and its `codexErrorInfo`"): [
        ("codex.outcome_vectors", lambda s, r: any(_get(t, "status") == "failed" for t in _turn_completed(r))),
    ],
    (CDX, "`httpStatusCode` in the detail of a codex.http_status_variant"): [
        ("codex.outcome_vectors", lambda s, r: '"httpStatusCode"' in json.dumps(r["scenario"])),
    ],
    (CDX, "item/completed `item.type`, `item.status` and agent-message `phase`"): [
        ("codex.outcome_vectors", lambda s, r: any(f.get("method") == "item/completed" for f in _frames(r))),
    ],
    # A completed turn selects a final answer and checks whether it is blank.
    (CDX, "Selected final answer"): [
        ("codex.outcome_vectors", lambda s, r: any(_get(t, "status") == "completed" for t in _turn_completed(r))),
    ],
    # A frame with an id and a method is a server request.
    (CDX, "Server request `method` and `availableDecisions`"): [
        ("codex.outcome_vectors", lambda s, r: any("id" in f and "method" in f for f in _frames(r))),
    ],
    # The turn/start response of a vector, and the startup rows triggered by a bad response.
    (CDX, "initialize, thread/start and turn/start responses"): [
        ("codex.outcome_vectors", _has_event("turn_start")),
        ("codex.startup_rejections", lambda s, r: "response" in str(r["trigger"])),
    ],
    (CDX, "Product stderr"): [("codex.outcome_vectors", _has_event("stderr")), ("codex.stderr_vectors", _every)],
    (CDX, "End of the app-server's stdout"): [("codex.outcome_vectors", _has_event("stdout_end"))],
    (CDX, "Task and parent working directory"): [("codex.startup_rejections", _startup(range(1, 4)))],
    (CDX, "Managed process outcome"): [
        ("codex.outcome_vectors", lambda s, r: _has_event("exit")(s, r) or _has_event("exit_unobservable")(s, r)),
    ],
    (
        CDX,
        "The provider's own state: the operation that failed, the configured permission mode, "
        "local cancellation, and failures of its own spawn and cleanup steps",
    ): [
        ("codex.outcome_vectors", lambda s, r: bool(r["scenario"].get("cancelled"))),
        ("codex.startup_rejections", _startup(range(4, 6))),
    ],
}

TABLE = "redaction.structured_inputs"


def _key(row: Row) -> tuple[str, str]:
    return str(row["product"]), str(row["input"])


def unmapped(spec: Spec) -> list[str]:
    """structured_inputs rows without an entry in READS, and entries naming no row."""
    keys = [_key(r) for r in spec.table("redaction", "structured_inputs").rows]
    return [f"row without reads: {k}" for k in keys if k not in READS] + [
        f"entry naming no row: {k}" for k in READS if k not in keys
    ]


def implied(spec: Spec, reached: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """The structured_inputs rows a test reaching ``reached`` exercises."""
    found = []
    rows: dict[str, set[int]] = {}
    for table, index in reached:
        rows.setdefault(table, set()).add(index)
    for position, row in enumerate(spec.table("redaction", "structured_inputs").rows):
        for table, match in READS.get(_key(row), []):
            area, name = table.split(".", 1)
            source = spec.table(area, name).rows
            if any(match(spec, source[i]) for i in rows.get(table, ())):
                found.append((TABLE, position))
                break
    return found
