"""Hypothesis strategies for settle_run and render_tool_result, inside the operations' domains.

Each settle_run input is drawn for one row (and column) of a stop-reason table, so that every
cell is checked in every run, and its turn facts have one source of truth: ``turnEnd`` (and
``droppedUnrun``) are what a harness folding the run's own log finds there (the last turn/end
that closed over work; accepted work cancelled unrun after it), as upstream's foldConsumedWork
does. Bindings follow the drivers that have them: text-stream is an out-of-process transport
(ACP) only. A returned out-of-process result is one a provider can return: a diagnostic only
with a stop reason that carries one (never completed or aborted: DIA-014, RES-015). The
oracle and the diagnosis live in conformance/areas/results/oracle.py.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.areas.results.oracle import (
    check_rendering,
    check_settlement,
    expected_rendering,
    expected_settlement,
)
from conformance.areas.selection.logs import CALL_ID_FORMS
from conformance.areas.selection.strategies import (
    NONE,
    UNICODE_TEXT,
    UNKNOWN_TURN_ENDS,
    WHOLE_BLOCKS,
    delta_text,
    run_logs,
    steps_for,
)
from conformance.areas.texts import any_text
from conformance.spec import Spec

__all__ = [
    "check_rendering",
    "check_settlement",
    "content_blocks",
    "diagnostic_stop_reasons",
    "expected_rendering",
    "expected_settlement",
]

Json = dict[str, Any]

#: Stop reasons a returned result may carry beyond the contract's five (the union is
#: merge-extensible; upstream's own tests use these two).
EXTENSION_STOP_REASONS = ("paused", "frobnicated", "停止😀 שלום e\u0301")


def diagnostic_stop_reasons(spec: Spec) -> list[str]:
    """The stop reasons a result with a diagnostic can have: every one but completed and
    aborted (a success and a local cancellation expose no failure facts: DIA-014)."""
    silent = {"completed", "aborted"}
    named = [str(s) for s in spec.vocabulary("results.stop_reason").values]
    return [s for s in named if s not in silent] + list(EXTENSION_STOP_REASONS)


@cache
def diagnostics(max_bytes: int | None = None) -> st.SearchStrategy[str]:
    """Provider diagnostics: short ones, and (unless ``max_bytes``) ones far past the bound."""
    short = any_text(max_size=40)
    if max_bytes is not None:
        return short.filter(lambda text: len(text.encode("utf-8")) <= max_bytes)
    unit = st.sampled_from(["x", "é", "权限", "😀", "\n", "Product subagent failure"])
    return st.one_of(short, st.builds(lambda u, n: u * n, unit, st.integers(1000, 4200)))


@cache
def content_blocks() -> st.SearchStrategy[list[Json]]:
    block = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, delta_text),
        st.builds(lambda t: {"type": "reasoning", "text": t}, delta_text),
        # Ids and names are any non-empty string (the schema): the whole of Unicode, every id form
        # of CALL_ID_FORMS (astral, right-to-left, combining, long) among them.
        st.builds(
            lambda i, n, a: {"type": "tool-call", "id": i, "name": n, "arguments": a},
            st.one_of(st.sampled_from([f.format(n=1) for f in CALL_ID_FORMS]), any_text(min_size=1, max_size=20)),
            st.one_of(st.sampled_from(["read", "读取_😀"]), any_text(min_size=1, max_size=12)),
            st.sampled_from(["{}", '{"path": "שלום/😀"}']),
        ),
        # An image in upstream's shape, and block types no vocabulary names (merge-extensible).
        st.sampled_from(WHOLE_BLOCKS).map(copy.deepcopy),
    )
    return st.lists(block, max_size=4)


@st.composite
def subagent_results(
    draw: st.DrawFn, spec: Spec, stop: str | None = None, diagnostic: bool | None = None, max_bytes: int | None = None
) -> Json:
    """A SubagentResult a provider can return (``stop`` and ``diagnostic`` fix what they name)."""
    reasons = [*(str(s) for s in spec.vocabulary("results.stop_reason").values), *EXTENSION_STOP_REASONS]
    stop_reason = stop if stop is not None else draw(st.sampled_from(reasons))
    result: Json = {"output": draw(content_blocks()), "stopReason": stop_reason}
    carries = stop_reason in diagnostic_stop_reasons(spec) or stop_reason not in reasons
    if carries and (diagnostic if diagnostic is not None else draw(st.booleans())):
        result["diagnostic"] = draw(diagnostics(max_bytes))
    return result


def _event_binding() -> st.SearchStrategy[str]:
    return st.sampled_from(["chunk-events", "embedded-stream"])


def _turn_end(draw: st.DrawFn, kind: str) -> str:
    """A turn/end kind of table row ``kind``: an unknown string for row unknown."""
    return draw(st.sampled_from(UNKNOWN_TURN_ENDS)) if kind == "unknown" else kind


@st.composite
def one_shot_requests(draw: st.DrawFn, kind: str, cancelled: bool) -> Json:
    """An in-process one-shot run whose own log's last turn end is row ``kind``."""
    binding = draw(_event_binding())
    log = draw(run_logs(binding, NONE if kind == "none" else _turn_end(draw, kind), prefix=draw(st.booleans())))
    return {
        "binding": binding,
        "shape": "one-shot",
        "driver": "in-process",
        "steps": [{"event": e} for e in log.events],
        "boundary": log.boundary,
        "turnEnd": log.turn_end,
        "cancelled": cancelled,
    }


@st.composite
def continuable_requests(draw: st.DrawFn, kind: str, dropped: bool, teardown_failed: bool = False) -> Json:
    """A continuable epoch whose own log's last turn end is row ``kind``; earlier epochs before
    the boundary, and the cancellation of unrun work logged after its turns when ``dropped``."""
    binding = draw(_event_binding())
    ending = NONE if kind == "none" else _turn_end(draw, kind)
    log = draw(run_logs(binding, ending, dropped_unrun=dropped, prefix=draw(st.booleans())))
    return {
        "binding": binding,
        "shape": "continuable",
        "driver": "in-process",
        "steps": [{"event": e} for e in log.events],
        "boundary": log.boundary,
        "turnEnd": log.turn_end,
        "droppedUnrun": log.dropped_unrun,
        "teardownFailed": teardown_failed,
    }


@st.composite
def out_of_process_requests(draw: st.DrawFn, spec: Spec, outcome: str, cancelled: bool) -> Json:
    """An out-of-process run whose attempt settled ``outcome`` (row of out_of_process_settlement)."""
    binding = draw(st.sampled_from([str(b) for b in spec.vocabulary("selection.binding").values]))
    steps = draw(steps_for(binding))
    if outcome == "returned":
        attempt: Json = {"outcome": "returned", "result": draw(subagent_results(spec))}
    else:
        attempt = {"outcome": "rejected"}
        if draw(st.booleans()):
            attempt["diagnostic"] = draw(diagnostics())
    return {
        "binding": binding,
        "shape": "one-shot",
        "driver": "out-of-process",
        "steps": steps,
        # A backend folds what the child published to it; events are the child's own.
        "boundary": 0,
        "cancelled": cancelled,
        "attempt": attempt,
    }


#: An output from the whole of Unicode: text, a tool call whose id and name leave the BMP, and
#: blocks that arrive whole (an image, a type no vocabulary names).
UNICODE_OUTPUT: tuple[Json, ...] = (
    {"type": "text", "text": UNICODE_TEXT},
    {"type": "tool-call", "id": CALL_ID_FORMS[0].format(n=1), "name": "读取_😀", "arguments": '{"p": "שלום"}'},
    *WHOLE_BLOCKS,
)
#: Diagnostics from the whole of Unicode: a short one, and one past the 4096-byte bound made of
#: astral characters, combining marks and right-to-left text, so the bound cuts inside them.
UNICODE_DIAGNOSTICS = (
    "Product subagent failure: 😀 שלום e\u0301",
    "😀e\u0301\u0308שלום\u200f" * 300,
)


def unicode_out_of_process_requests(spec: Spec, binding: str, outcome: str, cancelled: bool) -> list[Json]:
    """Fixed out-of-process runs of one out_of_process_settlement row, every run: a returned
    result with UNICODE_OUTPUT under each stop reason outside the contract's five, with each
    of UNICODE_DIAGNOSTICS and without one; a rejection with each diagnostic. No step is folded,
    so the settled output and diagnostic are copied or bounded from the attempt alone."""
    base: Json = {"binding": binding, "shape": "one-shot", "driver": "out-of-process", "steps": [], "boundary": 0}
    attempts: list[Json] = []
    if outcome == "returned":
        for stop in EXTENSION_STOP_REASONS:
            result: Json = {"output": copy.deepcopy(list(UNICODE_OUTPUT)), "stopReason": stop}
            attempts.append({"outcome": "returned", "result": result})
            for diagnostic in UNICODE_DIAGNOSTICS:
                attempts.append({"outcome": "returned", "result": {**result, "diagnostic": diagnostic}})
    else:
        attempts = [{"outcome": "rejected", "diagnostic": d} for d in UNICODE_DIAGNOSTICS]
    return [{**base, "cancelled": cancelled, "attempt": attempt} for attempt in attempts]


def unicode_rendered_results(stop: str | None, diagnostic: bool, text: bool) -> list[Json]:
    """A fixed result of one headline row (``stop``; None: each stop reason outside the five)
    with UNICODE_OUTPUT (without its text block where the row has no partial text) and a
    Unicode diagnostic, so a rendering copies such text, and skips such blocks, in every run."""
    output = [copy.deepcopy(b) for b in UNICODE_OUTPUT if text or b["type"] != "text"]
    found = []
    for stop_reason in [stop] if stop is not None else list(EXTENSION_STOP_REASONS):
        result: Json = {"output": output, "stopReason": stop_reason}
        if diagnostic:
            result["diagnostic"] = UNICODE_DIAGNOSTICS[0]
        found.append(result)
    return found


#: Partial texts made only of whitespace (ECMAScript's, Python's only, none of trim()'s), each
#: split over two text blocks too: non-empty, so RES-025 shows them (a check that trims first drops them).
BLANK_PARTIAL_TEXTS = (" ", "\n", "\t \r\n", "\u00a0\u3000\ufeff", "\u001c\u0085", "\u2028")


def blank_partial_results(spec: Spec, stop: str | None, diagnostic: bool) -> list[Json]:
    """The stratum of whitespace-only partial text for one headline row: every text of
    BLANK_PARTIAL_TEXTS, in one text block and cut over two beside a reasoning block, so the
    branch "T is non-empty" of RES-025 is reached on every run, whatever the profile."""
    stop_reason = stop if stop is not None else EXTENSION_STOP_REASONS[0]
    found = []
    for text in BLANK_PARTIAL_TEXTS:
        cut = max(1, len(text) // 2)
        split = [{"type": "text", "text": text[:cut]}, {"type": "reasoning", "text": "r"}]
        for output in ([{"type": "text", "text": text}], [*split, {"type": "text", "text": text[cut:]}]):
            result: Json = {"output": output, "stopReason": stop_reason}
            if diagnostic:
                result["diagnostic"] = "Product subagent failure (product: Codex; stage: turn; category: unknown)"
            found.append(result)
    return found


@st.composite
def rendered_results(draw: st.DrawFn, spec: Spec, stop: str | None, diagnostic: bool, text: bool) -> Json:
    """A result settlement can produce, for one headline row (``stop``; None for a stop reason
    outside the contract's five), with or without a diagnostic and partial text."""
    stop_reason = stop if stop is not None else draw(st.sampled_from([*EXTENSION_STOP_REASONS, "Completed", "error "]))
    output = draw(content_blocks())
    if text and not "".join(b["text"] for b in output if b["type"] == "text"):
        output.append({"type": "text", "text": draw(any_text(min_size=1, max_size=8))})
    if not text:
        output = [b for b in output if b["type"] != "text"] + draw(
            st.lists(st.just({"type": "text", "text": ""}), max_size=1)
        )
    result: Json = {"output": output, "stopReason": stop_reason}
    if diagnostic:
        result["diagnostic"] = draw(diagnostics(max_bytes=4096))
    return result
