"""The selection rule as the spec's tables state it.

The oracle applies table ``bindings`` (which field of which step feeds the candidate or the
fallback), ``stream_records`` and ``stream_chunks`` (which records and chunks carry text) step
by step, and records what it read: the pieces, the candidates, the empty messages and the
table rows each step exercised. Which rule a wrong selection breaks is blame.py beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.spec import Spec

Json = dict[str, Any]


@dataclass
class Piece:
    """One fallback piece: the step it came from, the bindings row that read it, its origin."""

    step: int
    row: int
    text: str
    origin: str  # "text" | "chunk:<type>" | "record:<type>"


@dataclass
class Candidate:
    step: int
    content: list[Json]
    interrupted: bool


@dataclass
class SelectionOracle:
    """The rule, applied step by step from the spec's tables (see the module docstring)."""

    spec: Spec
    binding: str
    extra_reads: tuple[str, ...] = ()  # bindings whose rows are also read (for mutant oracles only)
    contributing_records: tuple[str, ...] = ()  # record types also joined (mutants only)
    contributing_chunks: tuple[str, ...] = ()  # chunk types whose text also counts (mutants only)
    message: list[Json] | None = None
    candidates: list[Candidate] = field(default_factory=list)
    empty_messages: list[int] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    empty_pieces: list[int] = field(default_factory=list)
    reached: set[tuple[str, int]] = field(default_factory=set)
    steps: int = 0

    def __post_init__(self) -> None:
        rows = self.spec.table("selection", "bindings").rows
        # A text step is pushed text in any fold (SEL-022); the text-stream row says what it feeds.
        wanted = {self.binding, *self.extra_reads}
        self.reads = [(i, r) for i, r in enumerate(rows) if r["binding"] in wanted or r["step_kind"] == "text"]
        self.records = {
            r["record_type"]: (i, r) for i, r in enumerate(self.spec.table("selection", "stream_records").rows)
        }
        self.chunks = {
            r["chunk_type"]: (i, r) for i, r in enumerate(self.spec.table("selection", "stream_chunks").rows)
        }

    @staticmethod
    def _field(step: Json, dotted: str) -> Any:
        value: Any = step
        for key in dotted.split("."):
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def _chunk_text(self, chunk: Json) -> str:
        index, row = self.chunks[chunk["type"]]
        self.reached.add(("selection.stream_chunks", index))
        if row["contributes"] or chunk["type"] in self.contributing_chunks:
            return str(chunk.get("text", ""))
        return ""

    def _stream(self, stream: list[Json]) -> list[tuple[str, str]]:
        out = []
        for record in stream:
            index, row = self.records[record["type"]]
            self.reached.add(("selection.stream_records", index))
            how = row["contributes"]
            if how == "nothing" and record["type"] in self.contributing_records:
                how = "joined-members"
            if how == "joined-members":
                out.append((f"record:{record['type']}", "".join(record[row["members"]])))
            elif how == "text-delta-text":
                out.append((f"record:chunk:{record['chunk']['type']}", self._chunk_text(record["chunk"])))
        return out

    def push(self, step: Json) -> None:
        n = self.steps
        self.steps += 1
        kind, payload = ("text", step) if "text" in step else ("event", step["event"])
        for index, row in self.reads:
            if row["step_kind"] != kind or (kind == "event" and row["event_type"] != payload["type"]):
                continue
            value = self._field(payload, row["reads"])
            if value is None:
                continue
            self.reached.add(("selection.bindings", index))
            if row["feeds"] == "candidate":
                if len(value) > 0:
                    self.message = value
                    interrupted = bool(payload.get("data", {}).get("interrupted"))
                    self.candidates.append(Candidate(n, value, interrupted))
                else:
                    self.empty_messages.append(n)
                continue
            if isinstance(value, str):
                parts = [("text", value)]
            elif isinstance(value, list):
                parts = self._stream(value)
            else:
                parts = [(f"chunk:{value['type']}", self._chunk_text(value))]
            for origin, text in parts:
                if text:
                    self.pieces.append(Piece(n, index, text, origin))
                else:
                    self.empty_pieces.append(n)

    def fallback(self) -> str:
        return "".join(p.text for p in self.pieces)

    def collect(self) -> list[Json] | None:
        if self.message is not None:
            return self.message
        text = self.fallback()
        return [{"type": "text", "text": text}] if text else None


def oracle_values(spec: Spec, binding: str, steps: list[Json]) -> list[list[Json] | None]:
    """The selection after each step, by the oracle."""
    oracle = SelectionOracle(spec, binding)
    values = []
    for step in steps:
        oracle.push(step)
        values.append(oracle.collect())
    return values


def reached_rows(spec: Spec, binding: str, steps: list[Json]) -> set[tuple[str, int]]:
    """The rows of tables bindings, stream_records and stream_chunks that ``steps`` exercise:
    a row is reached when the rule reads a field, a record or a chunk of it from these steps, so
    a test checking the value after them checks that row's contribution (or non-contribution)."""
    oracle = SelectionOracle(spec, binding)
    for step in steps:
        oracle.push(step)
    return oracle.reached


# The stream readers' rules, and the origin of a piece each one decides (SelectionOracle._stream).
STREAM_RULES = {"SEL-018": "record:", "SEL-019": "record:chunk:text-delta"}


def stream_rules_reached(spec: Spec, binding: str, steps: list[Json], *, final: bool = False) -> set[str]:
    """The stream readers' rules (SEL-018, SEL-019) whose condition arose in ``steps``: the rule's
    answer after some step (after the last one only, ``final``) is the fallback, and a piece of it
    came from a data.stream record (from a raw text-delta chunk record, for SEL-019). Where none
    did, a right answer shows nothing of how the adapter reads a stream."""
    oracle = SelectionOracle(spec, binding)
    reached: set[str] = set()
    for n, step in enumerate(steps):
        oracle.push(step)
        if (final and n < len(steps) - 1) or oracle.message is not None:
            continue
        origins = [p.origin for p in oracle.pieces]
        reached |= {rid for rid, prefix in STREAM_RULES.items() if any(o.startswith(prefix) for o in origins)}
    return reached
