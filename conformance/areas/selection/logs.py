"""How the agent loop writes a child's turns into its event log, in both session formats.

The model of what a child did (turns of steps, each step one or more model attempts with
text, reasoning and tool-call blocks) and the writer that logs it: ``assistant/chunk`` events
for the ``chunk-events`` binding, streams embedded in ``assistant/message`` /
``assistant/attempt`` otherwise. The strategies (conformance/areas/selection/strategies.py)
draw the model; this module only writes it, so what is drawn and how it reads stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


#: The block kinds whose content streams as deltas; any other block (an image, a type no
#: vocabulary names) arrives whole, between its block-start and its block-end.
STREAMED_KINDS = ("text", "reasoning", "tool-call")


@dataclass
class Block:
    kind: str  # "text" | "reasoning" | "tool-call", or a whole block's type ("image", "citation", ...)
    deltas: list[str]
    call_id: str = ""
    name: str = ""
    whole: Json = field(default_factory=dict)  # a whole block's keys beside "type"

    def assembled(self) -> Json:
        joined = "".join(self.deltas)
        if self.kind == "tool-call":
            return {"type": "tool-call", "id": self.call_id, "name": self.name, "arguments": joined}
        if self.kind not in STREAMED_KINDS:
            return {"type": self.kind, **self.whole}
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
class Writer:
    """A log being written for ``binding``: its events so far, numbered and timed in order."""

    binding: str
    raw_text: bool = False  # write the first non-empty text delta of each attempt as a raw chunk record
    events: list[Json] = field(default_factory=list)
    seq: int = 0
    time: int = 1_786_348_800_000
    turn: int = 0

    def emit(self, kind: str, data: Json, **extra: Any) -> None:
        self.seq += 1
        self.time += 7
        self.events.append({"type": kind, "seq": self.seq, "time": self.time, "data": data, **extra})


#: Tool-call id forms, the n-th call of a log taking form n mod 4: ids from the whole of Unicode
#: (the schema pins only a non-empty string): astral characters, right-to-left text, combining
#: marks, long enough that a cut at 40 or 64 characters (code units or code points) shows; and ASCII.
CALL_ID_FORMS = (
    "toolu_{n}_😀𝄞" + "𝓐" * 30,
    "استدعاء_{n}_שלום",
    "call_{n}_" + "e\u0301\u0308a\u20dd" * 12,
    "call_{n}",
)


def number_calls(turns: list[Turn]) -> None:
    """Give every tool call of a log its id (CALL_ID_FORMS, cycling) in log order, so that each id
    is unique in the log."""
    calls = (b for t in turns for s in t.steps for a in s.attempts for b in a.blocks if b.kind == "tool-call")
    for n, block in enumerate(calls, start=1):
        block.call_id = CALL_ID_FORMS[(n - 1) % len(CALL_ID_FORMS)].format(n=n)


def _pack(chunks: list[Json], cuts: list[bool], time0: int, raw_text: bool = False) -> list[Json]:
    """Write a chunk list as stream records: runs of deltas packed, split where ``cuts`` says;
    with ``raw_text``, the first non-empty text delta as a raw ``chunk`` record (readers must join
    it, SEL-019) and every later one raw where ``cuts`` says."""
    records: list[Json] = []
    time = time0
    first_text = next((n for n, c in enumerate(chunks) if c["type"] == "text-delta" and c["text"]), None)
    for n, chunk in enumerate(chunks):
        time += 3
        kind = chunk["type"]
        packed = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks"}.get(kind)
        last = records[-1] if records else None
        raw = first_text is not None and (n == first_text or (n > first_text and cuts[n % len(cuts)]))
        if raw_text and kind == "text-delta" and raw:
            records.append({"type": "chunk", "time": time, "chunk": chunk})
        elif packed is not None:
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
# The inbox splice that cancels accepted work before it ran (RunLog.dropped_unrun).
DROPPED: Json = {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"}


def _chunks(attempt: Attempt) -> list[Json]:
    out: list[Json] = []
    last = len(attempt.blocks) - 1
    for index, block in enumerate(attempt.blocks):
        out.append({"type": "block-start", "index": index, "blockType": block.kind})
        for delta in block.deltas:  # none for a whole block: it arrives in its block-end
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
        kept = ("text", "reasoning")  # interruptedBlocks(): text and reasoning with non-whitespace text
        visible = [b.assembled() for b in attempt.blocks if b.kind in kept and "".join(b.deltas).strip()]
        return visible or None
    return None


def _reason(kind: str) -> Json:
    if kind == "aborted":
        return {"kind": "aborted", "reason": {"kind": "parent"}}
    if kind == "error":
        return {"kind": "error", "error": {"message": "upstream 500", "code": "UNKNOWN"}}
    return {"kind": kind}


def _write_attempt(writer: Writer, head: Json, attempt: Attempt, cuts: list[bool], name: str) -> None:
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
        stream = _pack(chunks, cuts, writer.time, writer.raw_text)
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


def write_turn(writer: Writer, turn: Turn, cuts: list[bool], auxiliary: list[int]) -> None:
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
