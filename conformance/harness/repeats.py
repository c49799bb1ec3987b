"""A failure costs one call, not a run: what an adapter's pure operations did wrong before.

Hypothesis shrinks over every ``Exception`` a test raises, trying smaller inputs that fail the
same way. Against an operation that hangs, each try waits out a deadline (a run of many
minutes); against one that always raises, each try raises again, in every test that calls it.
So the adapter remembers, for the whole run: an operation that hung is not called again, and
a call that fails exactly as an earlier call of its operation did ends its test at once with a
:class:`RepeatedFailure`, naming the first example and how many calls it has cost. The scope is
the run, not the test: a per-test memory would still wait one deadline in every test that calls
the operation (54 selection tests call select_output), and the hang is the adapter's, not the test's.
"""

from __future__ import annotations

import functools
import json
import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from conformance.spec.schema_errors import SHOWN_VALUE_MAX, elide

OWN_FRAMES_SHOWN = 100  # entries of the adapter's own call chain, after folding recursion
REPEATED_CALLS = 2  # the first calls of each pure operation asked twice, to check ADP-014
ANSWERS_KEPT = 256  # inputs per operation whose answer is kept, to compare with a later call of the same input


class RepeatedFailure(BaseException):
    """An operation failed as it failed earlier in this run (it hung, or it raised the same
    exception at the same place): the test fails at once, with the first failure's blame.

    A BaseException, as KeyboardInterrupt is, because Hypothesis would shrink over any
    Exception: calling the operation again and again to fail the same way."""

    def __init__(self, message: str, requirements: tuple[str, ...]) -> None:
        super().__init__(message)
        self.requirements = requirements


@dataclass
class First:
    """An operation's first failure of one kind: where and on what it happened, and how many
    calls of the operation failed that way since (itself included)."""

    message: str
    requirements: tuple[str, ...]
    test: str
    input: Any
    shown: int  # at most this many characters of the input are printed (shown_value_max)
    count: int = 1
    stuck: str = "hung"  # of a call that could not answer: what it did ("hung", "closed its stdout …")

    def example(self) -> str:
        shown = elide(json.dumps(self.input, ensure_ascii=False, default=repr), self.shown)
        return (f"in {self.test}, " if self.test else "") + f"on input {shown}"


def current_test() -> str:
    """The node id of the test running now (pytest's $PYTEST_CURRENT_TEST), or ""."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]


class Memory:
    """The run's failures of pure operations: one hang per operation, and each distinct
    exception (operation, kind, place) raised so far."""

    def __init__(self, shown: int = SHOWN_VALUE_MAX) -> None:
        self.shown = shown
        self.hung: dict[str, First] = {}
        self.raised: dict[tuple[str, object], First] = {}
        self.answers: dict[str, dict[bytes, Any]] = {}  # operation -> input (canonical) -> its first answer
        self.drifted: dict[str, First] = {}  # operations found answering one input two ways (ADP-014)
        self.failed: dict[tuple[str, bytes], First] = {}  # (operation, input) of calls that failed
        self.oversized: dict[str, First] = {}  # operations that answered a line beyond response_line_max

    def refuse_known(self, operation: str, key: bytes) -> RepeatedFailure | None:
        """The failure of a call not made: its operation was found non-deterministic, or the same
        input failed before (by ADP-014 it would fail again: a refused 50 MB answer is not asked
        for twice); None when the call is to be made."""
        first = self.drifted.get(operation) or self.oversized.get(operation) or self.failed.get((operation, key))
        if first is None:
            return None
        first.count += 1
        why = (
            "it answered one input two ways earlier in this run"
            if operation in self.drifted
            else "it answered with a line beyond response_line_max earlier in this run (not read twice)"
            if operation in self.oversized
            else "the same input failed earlier in this run"
        )
        return RepeatedFailure(
            f"{operation} not called: {why} ({first.message.split(chr(10), 1)[0]}), {first.example()}; "
            f"{first.count - 1} call(s) of it not made so far, this one included (a pure operation answers "
            "equal inputs alike, ADP-014)",
            first.requirements,
        )

    def fail(
        self, operation: str, key: bytes, message: str, requirements: tuple[str, ...], payload: Any, whole: bool = False
    ) -> None:
        """Remember a failed call: of this input, or (``whole``) of the operation, not called again."""
        first = First(message, requirements, current_test(), payload, self.shown)
        if whole:
            self.oversized.setdefault(operation, first)
        self.failed.setdefault((operation, key), first)

    def repeat_due(self, operation: str) -> bool:
        """Whether this call is asked twice to check ADP-014: the first two calls of each operation."""
        return len(self.answers.get(operation, ())) < REPEATED_CALLS

    def drift(self, operation: str, key: bytes, answer: Any, payload: Any) -> str | None:
        """How ``answer`` differs from the answer an earlier call of the same input got (remembered
        for the first ANSWERS_KEPT inputs of each operation); None when alike or not seen."""
        kept = self.answers.setdefault(operation, {})
        if key not in kept:
            if len(kept) < ANSWERS_KEPT:
                kept[key] = answer
            return None
        before = kept[key]
        if alike(before, answer):
            return None
        said = (
            f"{operation} answered one input two ways: {elide(_text(before), self.shown)} first, "
            f"{elide(_text(answer), self.shown)} when asked again (a pure operation must answer equal "
            "inputs alike, whatever was called before)"
        )
        self.drifted.setdefault(operation, First(said, ("ADP-014",), current_test(), payload, self.shown))
        return said

    def refuse_hung(self, operation: str) -> RepeatedFailure | None:
        """The failure of a call of ``operation`` not made because it hung before; None if it did not."""
        first = self.hung.get(operation)
        if first is None:
            return None
        first.count += 1
        return RepeatedFailure(
            f"{operation} not called: it {first.stuck} earlier in this run ({first.message}), {first.example()}; "
            f"{first.count - 1} call(s) of it not made so far, this one included (an operation that could "
            "not answer is not called again, so that it costs one wait in a run)",
            first.requirements,
        )

    def hang(
        self, operation: str, message: str, requirements: tuple[str, ...], payload: Any, stuck: str = "hung"
    ) -> None:
        self.hung.setdefault(operation, First(message, requirements, current_test(), payload, self.shown, stuck=stuck))

    def raised_again(
        self, operation: str, signature: object, message: str, requirements: tuple[str, ...], payload: Any
    ) -> RepeatedFailure | None:
        """A RepeatedFailure when an earlier call of ``operation`` failed with the same
        ``signature``; None (and the failure remembered) when this is its first time."""
        first = self.raised.get((operation, signature))
        if first is None:
            self.raised[(operation, signature)] = First(message, requirements, current_test(), payload, self.shown)
            return None
        first.count += 1
        return RepeatedFailure(
            f"{message}\nthe same failure as on its first example, {first.example()}; {first.count} call(s) "
            f"of {operation} failed this way so far in this run (the test ends here rather than "
            "shrinking over the same failure)",
            first.requirements,
        )


def exception_signature(exc: BaseException) -> object:
    """What makes two exceptions the same failure: their type and every frame they passed
    through (file and line), as Hypothesis tells one bug from another; not the message,
    which may quote the input."""
    frames = traceback.extract_tb(exc.__traceback__)
    return type(exc).__module__, type(exc).__qualname__, tuple((f.filename, f.lineno) for f in frames)


def where(tb: TracebackType | None, home: Path | None) -> str:
    """Where an adapter's exception came from: the adapter's own deepest frame (its full path),
    the library frame below it when a library raised it, then every other frame of the
    adapter's own call chain, innermost first (paths relative to the adapter's folder,
    recursion folded into ``×N``)."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return "no traceback"
    last = frames[-1]
    own = [f for f in frames if home is not None and _inside(f.filename, home)]
    if not own:
        return f"at {last.filename}:{last.lineno} in {last.name}"
    deepest = own[-1]
    text = f"at {deepest.filename}:{deepest.lineno} in {deepest.name}"
    if deepest is not last:
        text += f", inside {last.filename}:{last.lineno} in {last.name}"
    assert home is not None
    base = home.parent
    callers = [f"{_relative(f.filename, base)}:{f.lineno} in {f.name}" for f in reversed(own[:-1])]
    if callers:
        folded = _fold(callers)
        if len(folded) > OWN_FRAMES_SHOWN:
            half = OWN_FRAMES_SHOWN // 2
            folded = [*folded[:half], f"… {len(folded) - 2 * half} more …", *folded[-half:]]
        text += "; called from " + ", ".join(folded)
    return text


def _fold(entries: list[str]) -> list[str]:
    """Runs of a repeated entry, or of a repeated block of up to 4 entries (mutual recursion),
    written once with their count."""
    out: list[str] = []
    i = 0
    while i < len(entries):
        for size in range(1, 5):
            block = entries[i : i + size]
            times = 1
            while entries[i + times * size : i + (times + 1) * size] == block:
                times += 1
            if len(block) == size and times >= (2 if size == 1 else 3):
                out.append(f"{block[0] if size == 1 else '(' + ', '.join(block) + ')'} ×{times}")
                i += times * size
                break
        else:
            out.append(entries[i])
            i += 1
    return out


def _relative(filename: str, base: Path) -> str:
    path = _resolved(filename)
    try:
        return filename if path is None else str(path.relative_to(base))
    except ValueError:
        return filename


def _inside(filename: str, home: Path) -> bool:
    path = _resolved(filename)
    return path is not None and (path == home or path.is_relative_to(home))


@functools.lru_cache(maxsize=1024)
def _resolved(filename: str) -> Path | None:
    """A frame's file, resolved once: a RecursionError's traceback holds a thousand frames of the
    same few files, and resolving each (a syscall per path part) cost more than the failing call."""
    try:
        return Path(filename).resolve()
    except OSError:
        return None


def input_key(payload: Any) -> bytes:
    """An input as canonical bytes (keys sorted): equal inputs, equal keys."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # beyond what orjson writes (an integer past 64 bits, say)
        return json.dumps(payload, sort_keys=True, default=repr).encode()


def alike(one: Any, other: Any) -> bool:
    """Equal answers: equal values, or the same JSON text (NaN, which equals nothing, included)."""
    return bool(one == other) or _text(one, sort=True) == _text(other, sort=True)


def _text(value: Any, sort: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=sort, default=repr)
