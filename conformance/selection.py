"""Hypothesis strategies for child event logs, in both session formats.

A log is generated from a model of what the child did — turns of steps, each step a
model attempt with text, reasoning and tool-call blocks that ends stopped, with tool
calls, at max tokens, cancelled or failed — and then written out the way the agent loop
writes it for the binding under test (``assistant/chunk`` events, or streams embedded in
``assistant/message`` / ``assistant/attempt``). The expected output is not computed
here: the tests take it from the oracle, which is built from the spec's tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.blame import Violation, difference

Json = dict[str, Any]

# Text a child might stream: ASCII, whitespace of several kinds, CJK, accents, emoji.
_ALPHABET = st.sampled_from(list("ab z.\n\t") + ["\u00a0", "é", "权", "限", "😀", "\u3000", "\u200b", "\ufeff"])
delta_text = st.one_of(st.just(""), st.text(_ALPHABET, min_size=1, max_size=6))


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
class Step:
    blocks: list[Block]
    finish: str  # "stop" | "tool-calls" | "max-tokens" | "cancelled" | "failed"
    usage: bool = True


@dataclass
class _Writer:
    binding: str
    events: list[Json] = field(default_factory=list)
    seq: int = 0
    time: int = 1_786_348_800_000

    def emit(self, kind: str, data: Json, **extra: Any) -> None:
        self.seq += 1
        self.time += 7
        self.events.append({"type": kind, "seq": self.seq, "time": self.time, "data": data, **extra})


@st.composite
def blocks(draw: st.DrawFn, call_counter: list[int]) -> Block:
    kind = draw(st.sampled_from(["text", "text", "reasoning", "tool-call"]))
    deltas = draw(st.lists(delta_text, min_size=0, max_size=4))
    if kind != "tool-call":
        return Block(kind, deltas)
    call_counter[0] += 1
    return Block(
        kind, deltas or ["{}"], call_id=f"call_{call_counter[0]}", name=draw(st.sampled_from(["read", "todo_write"]))
    )


@st.composite
def turns(draw: st.DrawFn) -> list[list[Step]]:
    counter = [0]
    finish = st.sampled_from(["stop", "tool-calls", "max-tokens", "max-tokens", "cancelled", "failed"])
    step = st.builds(Step, st.lists(blocks(counter), max_size=4), finish, st.booleans())
    return draw(st.lists(st.lists(step, min_size=1, max_size=4), min_size=0, max_size=3))


def _chunks(step: Step) -> list[Json]:
    out: list[Json] = []
    for index, block in enumerate(step.blocks):
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
        if step.finish != "cancelled":
            out.append({"type": "block-end", "index": index, "block": block.assembled()})
    if step.usage:
        out.append({"type": "usage", "usage": {"inputTokens": 20, "outputTokens": 9}})
    if step.finish in ("stop", "tool-calls", "max-tokens"):
        out.append({"type": "finish", "reason": {"kind": step.finish}})
    elif step.finish == "failed":
        out.append({"type": "finish", "reason": {"kind": "error", "failure": {"message": "upstream 500"}}})
    return out


def _content(step: Step) -> list[Json] | None:
    """The message the loop appends for a step, or None when it appends none."""
    if step.finish in ("stop", "tool-calls"):
        return [b.assembled() for b in step.blocks]
    if step.finish == "max-tokens":  # the assembler drops every tool call: maybe nothing is left
        return [b.assembled() for b in step.blocks if b.kind != "tool-call"]
    if step.finish == "cancelled":
        visible = [b.assembled() for b in step.blocks if b.kind != "tool-call" and "".join(b.deltas).strip()]
        return visible or None
    return None


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
    ("request/header", {"model": "deepseek-v4-flash"}),
    ("system/message", {"text": "auxiliary"}),
    ("agent/inbox/spliced", {"count": 1}),
    ("approval/policy", {"mode": "never"}),
]


@st.composite
def child_log(draw: st.DrawFn, binding: str) -> list[Json]:
    """A realistic child-owned event suffix for ``chunk-events`` or ``embedded-stream``."""
    writer = _Writer(binding)
    cuts = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    for turn_no, steps in enumerate(draw(turns()), start=1):
        writer.emit("turn/start", {"turn": turn_no})
        last_finish = "completed"
        for step_no, step in enumerate(steps, start=1):
            if draw(st.integers(0, 9)) == 0:
                kind, data = draw(st.sampled_from(_AUXILIARY))
                writer.emit(kind, dict(data))
            chunks = _chunks(step)
            content = _content(step)
            head = {"turn": turn_no, "step": step_no}
            usage = {"usage": {"inputTokens": 30, "outputTokens": 4}} if step.usage else {}
            interrupted = {"interrupted": True} if step.finish == "cancelled" else {}
            if binding == "chunk-events":
                first = writer.seq + 1
                for chunk in chunks:
                    writer.emit("assistant/chunk", {**head, "chunk": chunk})
                if content is not None:
                    message = {
                        "role": "assistant",
                        "content": content,
                        "source": {"kind": "model", "provider": "fixture", "model": "fixture-model"},
                        "id": f"msg-{turn_no}-{step_no}",
                    }
                    writer.emit(
                        "assistant/message",
                        {**head, "message": message, **interrupted, **usage},
                        sourceEventSeqs=list(range(first, writer.seq + 1)),
                        surfaceOp="append",
                    )
            else:
                stream = _pack(chunks, cuts, writer.time)
                if content is not None:
                    message = {
                        "id": f"msg-{turn_no}-{step_no}",
                        "role": "assistant",
                        "content": content,
                        "source": {"kind": "model", "provider": "fixture", "model": "fixture-model"},
                    }
                    writer.emit(
                        "assistant/message",
                        {**head, "message": message, **interrupted, **usage, "stream": stream},
                        surfaceOp="append",
                    )
                else:
                    writer.emit("assistant/attempt", {**head, "stream": stream})
            for block in step.blocks:
                if block.kind == "tool-call" and step.finish == "tool-calls":
                    result = {
                        "type": "tool-result",
                        "toolCallId": block.call_id,
                        "content": [{"type": "text", "text": "tool output, never selected"}],
                    }
                    writer.emit("tool/result", {**head, "result": result}, surfaceOp="append")
            last_finish = {
                "stop": "completed",
                "tool-calls": "completed",
                "max-tokens": "max-tokens",
                "cancelled": "aborted",
                "failed": "error",
            }[step.finish]
        writer.emit("turn/end", {"turn": turn_no, "reason": {"kind": last_finish}})
    return writer.events


def text_stream(max_size: int = 12) -> st.SearchStrategy[list[str]]:
    """What a chunk-only transport pushes: raw text pieces, empty ones included."""
    return st.lists(delta_text, max_size=max_size)


def steps_for(binding: str) -> st.SearchStrategy[list[Json]]:
    """Fold steps (``{"event": …}`` or ``{"text": …}``) of a whole child run for ``binding``."""
    if binding == "text-stream":
        return text_stream().map(lambda texts: [{"text": t} for t in texts])
    return child_log(binding).map(lambda events: [{"event": e} for e in events])


# --------------------------------------------------------------------------- oracle


class SelectionOracle:
    """The selection rule as the spec's tables state it, applied step by step.

    ``bindings`` says which field of which step feeds the candidate or the fallback;
    ``stream_records`` and ``stream_chunks`` say which records and chunks carry text.
    Only what those tables cannot hold (non-empty = at least one block, a single text
    block, null for nothing: SEL-002, SEL-010, SEL-013) is written here.
    """

    def __init__(self, spec: Any, binding: str) -> None:
        # A text step is pushed text in any fold (SEL-022); the text-stream row says what it feeds.
        self.reads = [
            row
            for row in spec.table("selection", "bindings").rows
            if row["binding"] == binding or row["step_kind"] == "text"
        ]
        self.records = {row["record_type"]: row for row in spec.table("selection", "stream_records").rows}
        self.chunks = {row["chunk_type"]: row["contributes"] for row in spec.table("selection", "stream_chunks").rows}
        self.message: list[Json] | None = None
        self.partial: list[str] = []

    def _field(self, step: Json, dotted: str) -> Any:
        value: Any = step
        for key in dotted.split("."):
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def _chunk_text(self, chunk: Json) -> str:
        return str(chunk["text"]) if self.chunks[chunk["type"]] else ""

    def _stream_text(self, stream: list[Json]) -> str:
        parts = []
        for record in stream:
            how = self.records[record["type"]]["contributes"]
            if how == "joined-members":
                parts.append("".join(record[self.records[record["type"]]["members"]]))
            elif how == "text-delta-text":
                parts.append(self._chunk_text(record["chunk"]))
        return "".join(parts)

    def push(self, step: Json) -> None:
        kind, payload = ("text", step) if "text" in step else ("event", step["event"])
        for row in self.reads:
            if row["step_kind"] != kind or (kind == "event" and row["event_type"] != payload["type"]):
                continue
            value = self._field(payload, row["reads"])
            if value is None:
                continue
            if row["feeds"] == "candidate":
                if len(value) > 0:
                    self.message = value
            elif isinstance(value, str):
                self.partial.append(value)
            elif isinstance(value, list):
                self.partial.append(self._stream_text(value))
            else:
                self.partial.append(self._chunk_text(value))

    def collect(self) -> list[Json] | None:
        if self.message is not None:
            return self.message
        text = "".join(self.partial)
        return [{"type": "text", "text": text}] if text else None


def oracle_values(spec: Any, binding: str, steps: list[Json]) -> list[list[Json] | None]:
    """The selection after each step, by the oracle."""
    oracle = SelectionOracle(spec, binding)
    values = []
    for step in steps:
        oracle.push(step)
        values.append(oracle.collect())
    return values


def as_golden_vector(binding: str, covers: list[str], steps: list[Json], expected: Any) -> str:
    """A failing example written as a row for spec/selection.yaml's golden_vectors, ready to paste."""

    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = [
        "      - name: found-by-hypothesis",
        '        description: "A log Hypothesis found; describe what it shows."',
        f"        binding: {binding}",
        f"        covers: [{', '.join(covers)}]",
        "        steps:" + ("" if steps else " []"),
        *(f"          - {dump(step)}" for step in steps),
        f"        expected: {dump(expected)}",
    ]
    return "\n".join(lines)


def assert_selection(
    binding: str, covers: list[str], steps: list[Json], expected: Any, actual: Any, what: str, operation: str = ""
) -> None:
    """Compare, and on a mismatch blame ``covers`` and print the case as a golden vector."""
    if actual != expected:
        operation = operation or what.split()[0]
        raise Violation(
            covers,
            operation=operation,
            input={"binding": binding, "steps": steps}
            if operation == "fold_output"
            else {"binding": binding, "events": [s["event"] for s in steps if "event" in s]},
            expected=expected,
            actual=actual,
            detail=f"{what}: " + difference(expected, actual),
            sections={
                "as a golden vector (spec/selection.yaml, table golden_vectors)": as_golden_vector(
                    binding, covers, steps, expected
                )
            },
        )
