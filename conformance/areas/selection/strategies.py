"""Hypothesis strategies for child event logs, in both session formats.

A log is generated from a model of what the child did, and reads like one the agent loop
writes: turns (``turn/start``, the inbox claim of the turn's input, ``turn/end``) of steps
(``step/start`` … ``step/end``), each step one or more model attempts (failed attempts are
retried) with text, reasoning and tool-call blocks. A turn's ending agrees with its last
attempt: completed after a stop, max-tokens after a truncated attempt, aborted or interrupted
after a cancelled one, error after a failure, blocked before any step. Each attempt is written
the way the loop writes it for the binding under test (``assistant/chunk`` events, or streams
embedded in ``assistant/message`` / ``assistant/attempt``). The expected output is not
computed here: the tests take it from the oracle (conformance/areas/selection/oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.areas.selection.oracle import (
    SelectionOracle,
    as_golden_vector,
    assert_selection,
    check_folded,
    check_selected,
    oracle_values,
)

__all__ = [
    "SelectionOracle",
    "as_golden_vector",
    "assert_selection",
    "check_folded",
    "check_selected",
    "oracle_values",
]

Json = dict[str, Any]

# Text a child might stream: ASCII, whitespace of several kinds, CJK, accents, emoji. A
# string alphabet lets Hypothesis draw each delta as one choice, not one per character.
_ALPHABET = "ab z.\n\t" + "\u00a0é权限😀\u3000\u200b\ufeff"
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


@dataclass
class Block:
    kind: str  # "text" | "reasoning" | "tool-call"
    deltas: list[str]
    call_id: str = ""
    name: str = ""

    def assembled(self) -> Json:
        joined = "".join(self.deltas)
        if self.kind == "tool-call":
            return {"type": "tool-call", "id": self.call_id, "name": self.name, "arguments": joined}
        return {"type": self.kind, "text": joined}


@dataclass
class Attempt:
    blocks: list[Block]
    finish: str  # "stop" | "tool-calls" | "max-tokens" | "cancelled" | "failed"
    usage: bool = True


@dataclass
class Step:
    attempts: list[Attempt]  # failed, retried attempts, then the one that settled the step


@dataclass
class Turn:
    steps: list[Step]
    end: str | None  # the turn/end reason kind, None while the turn is still open


@dataclass
class _Writer:
    binding: str
    events: list[Json] = field(default_factory=list)
    seq: int = 0
    time: int = 1_786_348_800_000
    turn: int = 0

    def emit(self, kind: str, data: Json, **extra: Any) -> None:
        self.seq += 1
        self.time += 7
        self.events.append({"type": kind, "seq": self.seq, "time": self.time, "data": data, **extra})


# Strategies are built once, at import, and take no per-log state (tool-call ids are
# numbered after the draw, in log order): a composite strategy called with fresh arguments on
# every draw is rebuilt, validated and cached anew each time, which cost more than the draws.
# The builders called inside draws are memoized on their (hashable) arguments for the same
# reason: the same arguments give an equal strategy, so what is drawn does not change.
_BLOCK_KINDS = st.sampled_from(["text", "text", "reasoning", "tool-call"])
_DELTAS = st.lists(delta_text, min_size=0, max_size=3)
_TOOL_NAMES = st.sampled_from(["read", "todo_write"])


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    kind = draw(_BLOCK_KINDS)
    deltas = draw(_DELTAS)
    if kind != "tool-call":
        return Block(kind, deltas)
    return _tool_call(draw, deltas)


def _tool_call(draw: st.DrawFn, deltas: list[str] | None = None) -> Block:
    """A tool-call block; its id is given by :func:`_number_calls` once the log is drawn."""
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


def _number_calls(turns: list[Turn]) -> None:
    """Give every tool call of a log its id, ``call_1``, ``call_2``, … in log order."""
    calls = (b for t in turns for s in t.steps for a in s.attempts for b in a.blocks if b.kind == "tool-call")
    for n, block in enumerate(calls, start=1):
        block.call_id = f"call_{n}"


def _pack(chunks: list[Json], cuts: list[bool], time0: int) -> list[Json]:
    """Write a chunk list as stream records: runs of deltas packed, split where ``cuts`` says."""
    records: list[Json] = []
    time = time0
    for n, chunk in enumerate(chunks):
        time += 3
        kind = chunk["type"]
        packed = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks"}.get(kind)
        last = records[-1] if records else None
        if packed is not None:
            if (
                last is not None
                and last["type"] == packed
                and last["index"] == chunk["index"]
                and not cuts[n % len(cuts)]
            ):
                last["dt"].append(3)
                last["texts"].append(chunk["text"])
            elif kind == "text-delta" and cuts[(n + 1) % len(cuts)] and cuts[n % len(cuts)]:
                records.append({"type": "chunk", "time": time, "chunk": chunk})  # raw form readers accept
            else:
                records.append(
                    {"type": packed, "time0": time, "index": chunk["index"], "dt": [], "texts": [chunk["text"]]}
                )
        elif kind == "tool-call-delta":
            if (
                last is not None
                and last["type"] == "tool-call-chunks"
                and last["index"] == chunk["index"]
                and last["id"] == chunk["id"]
                and last.get("name") == chunk["name"]
                and not cuts[n % len(cuts)]
            ):
                last["dt"].append(3)
                last["args"].append(chunk["argumentsDelta"])
            else:
                records.append(
                    {
                        "type": "tool-call-chunks",
                        "time0": time,
                        "index": chunk["index"],
                        "dt": [],
                        "id": chunk["id"],
                        "name": chunk["name"],
                        "args": [chunk["argumentsDelta"]],
                    }
                )
        else:
            records.append({"type": "chunk", "time": time, "chunk": chunk})
    return records


_AUXILIARY: list[tuple[str, Json]] = [
    (
        "request/header",
        {"header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}, "reason": "initial"},
    ),
    ("request/context", {"provider": "deepseek-official", "model": "deepseek-v4-flash"}),
    ("session/title", {"title": "A child task", "messageSeqs": [1], "source": {"kind": "fallback"}}),
]
_CLAIM: Json = {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}
_DROPPED: Json = {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"}


def _chunks(attempt: Attempt) -> list[Json]:
    out: list[Json] = []
    last = len(attempt.blocks) - 1
    for index, block in enumerate(attempt.blocks):
        out.append({"type": "block-start", "index": index, "blockType": block.kind})
        for delta in block.deltas:
            if block.kind == "tool-call":
                out.append(
                    {
                        "type": "tool-call-delta",
                        "index": index,
                        "id": block.call_id,
                        "name": block.name,
                        "argumentsDelta": delta,
                    }
                )
            else:
                out.append({"type": f"{block.kind}-delta", "index": index, "text": delta})
        # A cancelled attempt leaves its blocks open; a failed one breaks off inside its last block.
        if attempt.finish != "cancelled" and not (attempt.finish == "failed" and index == last):
            out.append({"type": "block-end", "index": index, "block": block.assembled()})
    if attempt.usage:
        out.append({"type": "usage", "usage": {"inputTokens": 20, "outputTokens": 9}})
    if attempt.finish in ("stop", "tool-calls", "max-tokens"):
        out.append({"type": "finish", "reason": {"kind": attempt.finish}})
    elif attempt.finish == "failed":
        out.append({"type": "finish", "reason": {"kind": "error", "failure": {"message": "upstream 500"}}})
    return out


def _content(attempt: Attempt) -> list[Json] | None:
    """The message the loop appends for an attempt, or None when it appends none."""
    if attempt.finish in ("stop", "tool-calls"):
        return [b.assembled() for b in attempt.blocks]
    if attempt.finish == "max-tokens":  # the assembler drops every tool call: maybe nothing is left
        return [b.assembled() for b in attempt.blocks if b.kind != "tool-call"]
    if attempt.finish == "cancelled":  # the visible prefix, if any, is kept as an interrupted message
        visible = [b.assembled() for b in attempt.blocks if b.kind != "tool-call" and "".join(b.deltas).strip()]
        return visible or None
    return None


def _reason(kind: str) -> Json:
    if kind == "aborted":
        return {"kind": "aborted", "reason": {"kind": "parent"}}
    if kind == "error":
        return {"kind": "error", "error": {"message": "upstream 500", "code": "UNKNOWN"}}
    return {"kind": kind}


def _write_attempt(writer: _Writer, head: Json, attempt: Attempt, cuts: list[bool], name: str) -> None:
    chunks = _chunks(attempt)
    content = _content(attempt)
    usage = {"usage": {"inputTokens": 30, "outputTokens": 4}} if attempt.usage else {}
    interrupted = {"interrupted": True} if attempt.finish == "cancelled" else {}
    source = {"kind": "model", "provider": "fixture", "model": "fixture-model"}
    if writer.binding == "chunk-events":
        first = writer.seq + 1
        for chunk in chunks:
            writer.emit("assistant/chunk", {**head, "chunk": chunk})
        if content is not None:
            message = {"role": "assistant", "content": content, "source": source, "id": name}
            writer.emit(
                "assistant/message",
                {**head, "message": message, **interrupted, **usage},
                sourceEventSeqs=list(range(first, writer.seq + 1)),
                surfaceOp="append",
            )
    else:
        stream = _pack(chunks, cuts, writer.time)
        if content is not None:
            message = {"id": name, "role": "assistant", "content": content, "source": source}
            writer.emit(
                "assistant/message",
                {**head, "message": message, **interrupted, **usage, "stream": stream},
                surfaceOp="append",
            )
        else:
            writer.emit("assistant/attempt", {**head, "stream": stream})
    if attempt.finish == "tool-calls":
        for block in attempt.blocks:
            if block.kind == "tool-call":
                call = {"callId": block.call_id, "name": block.name, "arguments": "".join(block.deltas)}
                writer.emit("tool/call", {**head, **call})
                result = {
                    "source": {"kind": "tool", "callId": block.call_id},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": block.call_id,
                            "content": [{"type": "text", "text": "tool output, never selected"}],
                            "isError": False,
                        }
                    ],
                    "role": "user",
                    "id": f"{name}-result-{block.call_id}",
                }
                writer.emit("tool/result", {**head, "message": result}, surfaceOp="append")


def write_turn(writer: _Writer, turn: Turn, cuts: list[bool], auxiliary: list[int]) -> None:
    """Append one turn to ``writer`` as the agent loop logs it."""
    writer.turn += 1
    number = writer.turn
    writer.emit("turn/start", {"turn": number})
    writer.emit("agent/inbox/spliced", dict(_CLAIM))
    for step_no, step in enumerate(turn.steps, start=1):
        head = {"turn": number, "step": step_no}
        writer.emit("step/start", dict(head))
        if auxiliary and auxiliary[(number + step_no) % len(auxiliary)] < len(_AUXILIARY):
            kind, data = _AUXILIARY[auxiliary[(number + step_no) % len(auxiliary)]]
            writer.emit(kind, dict(data))
        for n, attempt in enumerate(step.attempts):
            _write_attempt(writer, head, attempt, cuts, f"msg-{number}-{step_no}-{n}")
        if turn.end is not None or step_no < len(turn.steps):
            writer.emit("step/end", dict(head))
    if turn.end is not None:
        writer.emit("turn/end", {"turn": number, "reason": _reason(turn.end)})


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
    writer = _Writer(binding)
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
    _number_calls([*earlier, *own])
    for turn in earlier:
        write_turn(writer, turn, cuts, auxiliary)
    boundary = len(writer.events)
    for turn in own:
        write_turn(writer, turn, cuts, auxiliary)
    closed = [t.end for t in own if t.end is not None]
    turn_end = closed[-1] if closed else None
    if dropped_unrun:
        writer.emit("agent/inbox/spliced", dict(_DROPPED))
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
