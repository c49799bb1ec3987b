"""Strategies for claude_code_outcome scenarios: SDK messages, callbacks, exceptions and process
outcomes, valid and hostile, drawn from the vocabularies and tables of spec/claude-code.yaml.

They draw what a Claude Code provider may observe, including the near misses and the values on
which JavaScript and Python disagree, so that the oracle (conformance/areas/claude_code/oracle.py)
is asked about every row its tables name.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.areas.claude_code.oracle import Json, tables
from conformance.areas.texts import any_text

MAX_EXIT_CODE = 4294967295

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


ABSENT = object()


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Draw from each strategy in proportion to its weight (st.one_of weighs its branches alike)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


def put(message: Json, key: str, value: Any) -> None:
    """Set ``key`` unless the drawn value is ABSENT (the key left out)."""
    if value is not ABSENT:
        message[key] = value


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, or (one time in five) the key left out."""
    return weighted((4, strategy), (1, st.just(ABSENT)))


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
        lambda extra, read: {**extra, "type": "result", **{k: v for k, v in read.items() if v is not ABSENT}},
        EXTRA_RESULT_FIELDS,
        fields,
    )


def _insert(text: str, char: str, at: int) -> str:
    at %= len(text) + 1
    return text[:at] + char + text[at:]


def non_blank_result_texts(spec: Any) -> st.SearchStrategy[str]:
    """The result_texts that are not blank by JS rules, drawn so rather than filtered: any
    non-blank text, a whitespace_text that holds at least one code point Python strips but JS
    does not (one of them put in at any place), or "answer" — the values the filter kept."""
    t = tables(spec)
    blank = t.whitespace
    visible = sorted(set(t.strip_only) - blank)
    branches: list[st.SearchStrategy[str]] = [
        any_text(min_size=1, max_size=12).filter(lambda s: not all(c in blank for c in s))
    ]
    if visible:
        branches.append(
            st.builds(_insert, whitespace_text(spec, max_size=5), st.sampled_from(visible), st.integers(0, 5))
        )
    return st.one_of(*branches, st.just("answer"))


def strict_successes(spec: Any) -> st.SearchStrategy[Json]:
    non_blank = non_blank_result_texts(spec)
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


def situations(spec: Any) -> dict[str, st.SearchStrategy[Json]]:
    """Runs drawn to end in each situation of table stop_reasons, by the row's stop reason: a
    strict success last, a failing result last, or any run cancelled."""
    success = strict_successes(spec).map(lambda m: {"message": m})
    others = st.lists(
        st.one_of(
            st.builds(lambda m: {"message": m}, st.one_of(other_messages(), native_denials())),
            permission_events(spec),
            success,
        ),
        max_size=4,
    )
    completed = st.fixed_dictionaries(
        {
            "mode": st.sampled_from(tables(spec).modes),
            "events": st.builds(lambda b, last: [*b, last], others, success),
            "cancelled": st.just(False),
        },
        optional={"outcome": st.one_of(st.none(), outcomes(spec))},
    )
    ending_in_error = st.builds(lambda b, last: [*b, {"message": last}], events(spec), error_results(spec))
    failed = scenarios(spec, event_lists=ending_in_error, cancelled=st.just(False))  # a failing result decides
    return {"completed": completed, "error": failed, "aborted": scenarios(spec, cancelled=st.just(True))}
