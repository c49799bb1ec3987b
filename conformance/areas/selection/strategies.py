"""Hypothesis strategies for child event logs, in both session formats.

A log is drawn as a model of what the child did and written as the agent loop writes it
(conformance/areas/selection/logs.py): turns of steps, each step one or more model attempts
(failed attempts are retried) with text, reasoning and tool-call blocks, and blocks that arrive
whole: images in upstream's shape and block types no vocabulary names (WHOLE_BLOCKS). A turn's ending agrees
with its last attempt: completed after a stop, max-tokens after a truncated attempt, aborted or
interrupted after a cancelled one, error after a failure, blocked before any step. The expected
output is not computed here: the tests take it from the oracle
(conformance/areas/selection/oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.areas.selection.logs import (
    CALL_ID_FORMS,
    DROPPED,
    Attempt,
    Block,
    Step,
    Turn,
    Writer,
    number_calls,
    write_turn,
)

Json = dict[str, Any]

# Text a child might stream: ASCII, whitespace of several kinds, CJK, accents, emoji, a combining
# mark, right-to-left text and mark (UNICODE_TEXT reaches all of them in every run). A
# string alphabet lets Hypothesis draw each delta as one choice, not one per character.
_ALPHABET = "ab z.\n\t" + "\u00a0é权限😀\u3000\u200b\ufeff" + "\u0301ש\u200f"
delta_text = st.one_of(st.just(""), st.text(_ALPHABET, min_size=1, max_size=6))

#: The turn end kinds a log can record, with the final attempt finishes that lead to them
#: ("" = the turn may end before any step).
TURN_ENDINGS: dict[str, tuple[str, ...]] = {
    "completed": ("stop",),
    "max-tokens": ("max-tokens",),
    "aborted": ("cancelled", ""),
    "interrupted": ("cancelled", ""),
    "error": ("failed", ""),
    "blocked": ("",),
}
#: Kinds outside the contract's vocabulary (the reason union is merge-extensible).
UNKNOWN_TURN_ENDS = ("timeout", "paused", "frobnicated")
ANY = "any"  # a run_log ending: whatever the model draws
NONE = "none"  # a run_log ending: no turn/end is consumed (nothing ran, or the last turn is still open)


# Strategies are built once, at import, and take no per-log state (tool-call ids are
# numbered after the draw, in log order): a composite strategy called with fresh arguments on
# every draw is rebuilt, validated and cached anew each time, which cost more than the draws.
# The builders called inside draws are memoized on their (hashable) arguments for the same
# reason: the same arguments give an equal strategy, so what is drawn does not change.
_BLOCK_KINDS = st.sampled_from(["text", "text", "reasoning", "tool-call", "whole"])
_DELTAS = st.lists(delta_text, min_size=0, max_size=3)
_TOOL_NAMES = st.sampled_from(["read", "todo_write", "读取_😀"])

#: Blocks that arrive whole (no deltas): an image in upstream's shape (ContentBlock
#: ``{type: "image", attachment}``), and block types no vocabulary names, with keys of their own
#: (the ContentBlock union is merge-extensible: only ``type`` is pinned, spec/schema/common.json).
WHOLE_BLOCKS: tuple[Json, ...] = (
    {"type": "image", "attachment": {"id": "img-1"}},
    {"type": "citation", "cited": {"url": "https://example.com/a", "title": "A"}, "note": "权限 😀"},
    {"type": "x-audio", "data": "UklGRg==", "format": "wav", "durationMs": 1200},
)
_WHOLE = st.sampled_from(WHOLE_BLOCKS)


def whole_block(block: Json) -> Block:
    return Block(str(block["type"]), [], whole={k: v for k, v in block.items() if k != "type"})


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    kind = draw(_BLOCK_KINDS)
    if kind == "whole":
        return whole_block(draw(_WHOLE))
    deltas = draw(_DELTAS)
    if kind != "tool-call":
        return Block(kind, deltas)
    return _tool_call(draw, deltas)


def _tool_call(draw: st.DrawFn, deltas: list[str] | None = None) -> Block:
    """A tool-call block; its id is given by ``logs.number_calls`` once the log is drawn."""
    return Block("tool-call", deltas or ["{}"], name=draw(_TOOL_NAMES))


_BLOCK_LISTS = st.lists(blocks(), max_size=3)


@cache
@st.composite
def attempts(draw: st.DrawFn, finish: str) -> Attempt:
    """One model attempt that ends with ``finish``: a stop carries no tool call, a tool-calls
    finish at least one."""
    found = draw(_BLOCK_LISTS)
    if finish == "stop":
        found = [b for b in found if b.kind != "tool-call"]
    elif finish == "tool-calls" and not any(b.kind == "tool-call" for b in found):
        found.append(_tool_call(draw))
    return Attempt(found, finish, draw(st.booleans()))


_RETRIED = st.lists(attempts("failed"), max_size=1)


@cache
@st.composite
def steps(draw: st.DrawFn, finish: str) -> Step:
    """A step whose settling attempt ends with ``finish``, after up to one failed, retried attempt."""
    retried = draw(_RETRIED) if finish != "failed" else []
    return Step([*retried, draw(attempts(finish))])


_EARLIER_STEPS = st.lists(steps("tool-calls"), max_size=1)


@cache
@st.composite
def turn_model(draw: st.DrawFn, end: str | None) -> Turn:
    """A turn that ends ``end`` (a kind, or None for a turn still open when the run settled)."""
    if end is None:
        finals: tuple[str, ...] = ("cancelled", "failed")
    elif end in TURN_ENDINGS:
        finals = TURN_ENDINGS[end]
    else:  # an unknown kind: any ending a model attempt can have
        finals = ("stop", "max-tokens", "cancelled", "failed")
    final = draw(st.sampled_from(finals))
    if not final:
        return Turn([], end)
    earlier = draw(_EARLIER_STEPS)
    return Turn([*earlier, draw(steps(final))], end)


_TURN_KINDS = st.sampled_from([*TURN_ENDINGS, *TURN_ENDINGS, *UNKNOWN_TURN_ENDS])
_CLOSED_TURN = _TURN_KINDS.flatmap(turn_model)


@cache
def closed_turns(max_size: int = 2) -> st.SearchStrategy[list[Turn]]:
    return st.lists(_CLOSED_TURN, max_size=max_size)


@dataclass
class RunLog:
    """A generated log: its events, where the run's own part starts, and the turn facts of that
    part as a harness folding its own log finds them (the last turn/end that closed over work,
    and whether accepted work was then cancelled unrun)."""

    events: list[Json]
    boundary: int
    turn_end: str | None
    dropped_unrun: bool


_CUTS = st.lists(st.booleans(), min_size=1, max_size=8)
_AUXILIARY_PICKS = st.lists(st.integers(0, 9), max_size=4)


@cache
@st.composite
def run_logs(
    draw: st.DrawFn, binding: str, ending: str = ANY, *, dropped_unrun: bool = False, prefix: bool = False
) -> RunLog:
    """A child's log for ``binding`` whose own part ends ``ending``: a turn end kind, NONE (no
    turn/end consumed) or ANY. ``prefix`` puts earlier, not-owned closed turns before it (a
    continuable child's earlier epochs, a fork's seed); ``dropped_unrun`` closes the own part
    with the cancellation of accepted, unrun work."""
    writer = Writer(binding)
    cuts = draw(_CUTS)
    auxiliary = draw(_AUXILIARY_PICKS)
    earlier: list[Turn] = draw(closed_turns(max_size=2)) if prefix else []
    turn_end: str | None = None
    if ending == ANY:
        own: list[Turn] = draw(closed_turns())
        still_open: bool = draw(st.booleans())
        if own and still_open:
            own[-1] = draw(turn_model(None))
    elif ending == NONE:
        own = [draw(turn_model(None))] if draw(st.booleans()) else []
    else:
        own = [*draw(closed_turns(max_size=1)), draw(turn_model(ending))]
    number_calls([*earlier, *own])
    for turn in earlier:
        write_turn(writer, turn, cuts, auxiliary)
    boundary = len(writer.events)
    for turn in own:
        write_turn(writer, turn, cuts, auxiliary)
    closed = [t.end for t in own if t.end is not None]
    turn_end = closed[-1] if closed else None
    if dropped_unrun:
        writer.emit("agent/inbox/spliced", dict(DROPPED))
    return RunLog(writer.events, boundary, turn_end, dropped_unrun)


@cache
def child_log(binding: str) -> st.SearchStrategy[list[Json]]:
    """A realistic child-owned event suffix for ``chunk-events`` or ``embedded-stream``."""
    return run_logs(binding).map(lambda log: log.events)


@cache
def text_stream(max_size: int = 12) -> st.SearchStrategy[list[str]]:
    """What a chunk-only transport pushes: raw text pieces, empty ones included."""
    return st.lists(delta_text, max_size=max_size)


@cache
def steps_for(binding: str) -> st.SearchStrategy[list[Json]]:
    """Fold steps (``{"event": …}`` or ``{"text": …}``) of a whole child run for ``binding``."""
    if binding == "text-stream":
        return text_stream().map(lambda texts: [{"text": t} for t in texts])
    return child_log(binding).map(lambda events: [{"event": e} for e in events])


# ---------------------------------------------------------------- strata reached in every run

#: Text from the whole of Unicode in one piece: an astral character, right-to-left text and
#: combining marks (decomposed, so a fold that normalizes it changes it: SEL-011).
UNICODE_TEXT = "😀𝄞 שלום مرحبا e\u0301\u0308"
_RAW_ENDS = st.sampled_from(["error", None, *UNKNOWN_TURN_ENDS])
_FAILED_ATTEMPTS = st.lists(attempts("failed"), min_size=1, max_size=2)


@st.composite
def _failing_turn(draw: st.DrawFn) -> Turn:
    """A turn of one step whose attempts all fail (no message is appended), ending error, open or
    with a kind outside the vocabulary."""
    return Turn([Step(draw(_FAILED_ATTEMPTS))], draw(_RAW_ENDS))


_FAILING_TURNS = st.lists(_failing_turn(), min_size=1, max_size=2)


@cache
@st.composite
def raw_text_logs(draw: st.DrawFn, binding: str) -> list[Json]:
    """The raw text-delta stratum of a ``data.stream`` binding: a log whose every attempt failed,
    so no message is folded and the streamed text is the selection, and whose last attempt
    streams UNICODE_TEXT first in a text block, written (as every attempt's first non-empty text
    delta) as a raw ``chunk`` record: in every example the answer holds a raw record's text
    (SEL-019), beside packed runs and other raw records where the cuts fall."""
    turns = draw(_FAILING_TURNS)
    last = turns[-1].steps[-1].attempts[-1]
    last.blocks.insert(0, Block("text", [UNICODE_TEXT, *draw(_DELTAS)]))
    number_calls(turns)
    writer = Writer(binding, raw_text=True)
    cuts, auxiliary = draw(_CUTS), draw(_AUXILIARY_PICKS)
    for turn in turns:
        write_turn(writer, turn, cuts, auxiliary)
    return [{"event": e} for e in writer.events]


def unicode_id_logs(binding: str) -> list[list[Json]]:
    """Fixed logs (steps) whose selection is a message holding tool calls with every id form of
    CALL_ID_FORMS, a tool name outside ASCII and UNICODE_TEXT, and one whose fallback streams
    UNICODE_TEXT: a selection returns ids and texts whole (SEL-005, SEL-011) in every run."""
    calls = [
        Block("tool-call", ['{"path": "a"}'], call_id=form.format(n=n), name="读取_😀")
        for n, form in enumerate(CALL_ID_FORMS, 1)
    ]
    chosen = Attempt([Block("text", [UNICODE_TEXT[:3], UNICODE_TEXT[3:]]), *calls], "tool-calls")
    broken = Attempt([Block("text", ["then ", "broke"])], "failed")
    fallback = Attempt([Block("reasoning", ["𝓐"]), Block("text", [UNICODE_TEXT[:1], UNICODE_TEXT[1:]])], "failed")
    logs = []
    for turns in ([Turn([Step([chosen]), Step([broken])], "error")], [Turn([Step([fallback])], "error")]):
        writer = Writer(binding)
        for turn in turns:
            write_turn(writer, turn, [False, True], [])
        logs.append([{"event": e} for e in writer.events])
    return logs


def empty_message_logs(binding: str) -> list[list[Json]]:
    """Fixed logs (steps) in which an empty (usage-only) message is folded while no non-empty one
    exists: a max-tokens step that assembled only a tool call, after a failed attempt that streamed
    text, with nothing streamed, and before a later attempt's text. SEL-003's fallback branch (it
    decides as if the empty message's content were absent) is reached in every run: a fold that
    lets the empty message win gives [] where the rule gives the text or null."""
    streamed = Attempt([Block("text", ["partial ", UNICODE_TEXT])], "failed")
    logs = []
    for turns in (
        [Turn([Step([streamed, _tool_only()])], "max-tokens")],
        [Turn([Step([_tool_only()])], "max-tokens")],
        [Turn([Step([_tool_only()])], "max-tokens"), Turn([Step([streamed])], "error")],
    ):
        number_calls(turns)
        writer = Writer(binding)
        for turn in turns:
            write_turn(writer, turn, [False, True], [])
        logs.append([{"event": e} for e in writer.events])
    return logs


def _tool_only() -> Attempt:
    """A max-tokens attempt that streamed only a tool call: the assembler drops it, so the loop
    appends a message whose content is [] (SEL-003's source)."""
    return Attempt([Block("tool-call", ['{"path": "a"}'], name="read")], "max-tokens")
