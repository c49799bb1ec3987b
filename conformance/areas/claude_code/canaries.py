"""Canaries for claude_code_outcome (redaction.yaml RED-008): canary and decoy strings, and one
planter per Claude Code row of redaction.yaml table canary_sites.

A planted scenario carries canaries in raw fields the provider reads or must ignore; replacing
them by a decoy gives a twin whose diagnostic must be the same and canary-free.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.areas.claude_code.oracle import PRODUCT, Json, tables
from conformance.areas.claude_code.strategies import ABSENT, other_messages, outcomes, permission_events, put

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


_EXTRA_NAMES = st.lists(st.sampled_from(["api_error_status", "terminal_reason", "stop_reason", "uuid"]), unique=True)


def _raw_extras(draw: st.DrawFn, c: Canaries) -> Json:
    """Canaries in result fields classification never reads (CC-005)."""
    names = draw(_EXTRA_NAMES)
    return {name: c.token(draw) for name in names}


def _site_sdk_result_errors(draw: st.DrawFn, spec: Any, c: Canaries) -> list[Json]:
    subtype = draw(st.sampled_from(tables(spec).error_subtypes))
    shape = draw(st.sampled_from(["array", "array", "string", "object"]))
    # Every array mixes string and object elements, a canary in an object's value and key.
    errors: Any = [c.token(draw) for _ in range(draw(st.integers(0, 2)))]
    errors.insert(draw(st.integers(0, len(errors))), {"message": c.token(draw), c.token(draw, shape="token"): {}})
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
    observed = st.one_of(st.just(ABSENT), st.none(), outcomes(spec))

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
        put(scenario, "outcome", draw(observed))
        return scenario, c.made, sites

    return build()
