"""The diagnosis of a wrong selection, and the checks that raise it.

The diagnosis compares an adapter's value with the oracle's (oracle.py) at the first step where
they part and names the one rule that tells them apart (an empty message taken as the answer, or
one that cleared the selected message, is SEL-003, streamed text that displaced a message
SEL-004, a missing fallback SEL-008, ``[]`` for nothing SEL-013, …). Where one value cannot tell
two rules apart, the adapter is asked again (``probe``, ``fold``): a fallback it never shows in
any binding is SEL-008, one it shows elsewhere but not from this binding's rows is the binding's
rule. Requirement IDs of binding-specific rules come from column ``requirement`` of table
``bindings``; only the general rules SEL-001 to SEL-014 and SEL-017/019/022/025 are written
here, each where the text of that requirement decides.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from conformance.areas.selection.logs import STREAMED_KINDS
from conformance.areas.selection.oracle import Candidate, Json, SelectionOracle, oracle_values
from conformance.areas.selection.probes import Fold, fallback_shown, last_candidate, row_read
from conformance.spec import Spec
from conformance.verdict.blame import Violation, difference, pasteable_row


def _binding_requirement(spec: Spec, row: int) -> list[str]:
    return list(spec.table("selection", "bindings").rows[row]["requirement"])


def _streamed(actual: Any, oracle: SelectionOracle) -> bool:
    """Whether ``actual`` is streamed text in the fallback's shape: one text block joining a run
    of consecutive fallback pieces (all of them, or those of some later steps)."""
    if not (isinstance(actual, list) and len(actual) == 1 and isinstance(actual[0], dict)):
        return False
    text = actual[0].get("text")
    if actual[0].get("type") != "text" or not isinstance(text, str) or not text:
        return False
    pieces = [p.text for p in oracle.pieces]
    for start in range(len(pieces)):
        joined = ""
        for piece in pieces[start:]:
            joined += piece
            if joined == text:
                return True
            if not text.startswith(joined):
                break
    return False


def _holds_whole_block(content: list[Json]) -> bool:
    """Whether ``content`` holds a block of a kind other than text, reasoning and tool-call."""
    return any(isinstance(b, dict) and b.get("type") not in STREAMED_KINDS for b in content)


def _has_visible_text(content: list[Json]) -> bool:
    return any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in content)


def _mutant(spec: Spec, binding: str, steps: list[Json], **changes: Any) -> list[Json] | None:
    oracle = SelectionOracle(spec, binding, **changes)
    for step in steps:
        oracle.push(step)
    return oracle.collect()


def _other_bindings(spec: Spec, binding: str) -> tuple[str, ...]:
    event_bindings = {r["binding"] for r in spec.table("selection", "bindings").rows if r["step_kind"] == "event"}
    return tuple(sorted(event_bindings - {binding}))


def diagnose(
    spec: Spec, binding: str, steps: list[Json], actual: Any, *, incremental: bool = False, fold: Fold | None = None
) -> tuple[list[str], str]:
    """The requirement(s) whose rule separates ``actual`` from the rule's value after ``steps``
    (the adapter's value after the last of them), and why, in one sentence. ``incremental``:
    the adapter's values after every shorter prefix were right, so the last step caused this.
    ``fold`` asks the adapter's fold again (whether it shows a fallback anywhere)."""
    oracle = SelectionOracle(spec, binding)
    for step in steps:
        oracle.push(step)
    expected = oracle.collect()
    last = len(steps) - 1
    # [] where nothing is selected is SEL-013, unless it is an empty message's content taken as
    # the answer (SEL-003): a fold shows that by turning [] at that very step; a whole-list
    # value can only show that an empty message was there.
    at_empty_message = bool(oracle.empty_messages) and (oracle.empty_messages[-1] == last or not incremental)
    if expected is None:
        if actual == []:
            if at_empty_message:
                return ["SEL-003"], "the value became [] at a usage-only empty message: its content was taken"
            return ["SEL-013"], "nothing is selected, which is null, not []"
        if isinstance(actual, list) and len(actual) == 1 and actual[0] == {"type": "text", "text": ""}:
            if oracle.empty_pieces:
                return ["SEL-012"], "an empty fallback piece turned null into a text block"
            return ["SEL-013"], "nothing is selected, which is null, not a text block with empty text"
        return _extra_text(spec, binding, steps, actual, oracle)
    if oracle.message is not None:
        # The fold was right until a usage-only empty message, which dropped the message it had
        # selected: the seed's own bug, whatever the value it fell back to (SEL-003).
        if incremental and at_empty_message and actual == _cleared(oracle):
            return ["SEL-003"], "a usage-only empty message cleared the selected message"
        return _candidate(spec, binding, steps, actual, oracle, incremental)
    return _fallback(spec, binding, steps, actual, oracle, fold)


def _cleared(oracle: SelectionOracle) -> list[Json] | None:
    """The selection of a fold that lets its last empty message clear the message chosen before it."""
    later = [c.content for c in oracle.candidates if c.step > oracle.empty_messages[-1]]
    if later:
        return later[-1]
    text = oracle.fallback()
    return [{"type": "text", "text": text}] if text else None


def _candidate(
    spec: Spec, binding: str, steps: list[Json], actual: Any, oracle: SelectionOracle, incremental: bool
) -> tuple[list[str], str]:
    chosen = oracle.candidates[-1]
    if actual == [] and oracle.empty_messages and oracle.empty_messages[-1] > chosen.step:
        return ["SEL-003"], "a later usage-only empty message erased the selected message"
    if incremental and chosen.step < oracle.steps - 1 and _streamed(actual, oracle):
        # The fold held the message after its step; a later step's streamed text took its place.
        return ["SEL-004"], "text streamed after a non-empty message displaced it"
    fallback_block = [{"type": "text", "text": oracle.fallback()}]
    passed_over = actual is None or actual == fallback_block or any(actual == c.content for c in oracle.candidates)
    if _holds_whole_block(chosen.content) and (passed_over or _streamed(actual, oracle)):
        # A typed fold that cannot parse an image, or a block type no vocabulary names, and so
        # ignores the message: the message counts by its blocks, whatever they are (SEL-002).
        why = "a message holding a block of any type (an image, a type no vocabulary names) is non-empty, and selected"
        return ["SEL-002"], why
    if passed_over and not _has_visible_text(chosen.content):
        return ["SEL-002"], "a message without visible text is still non-empty (it holds a block) and is selected"
    if actual is None or actual == fallback_block:
        if actual == fallback_block:
            return ["SEL-004"], "streamed text displaced a non-empty message"
        return _binding_requirement(spec, _candidate_row(oracle)), "a non-empty message was not taken"
    for earlier in reversed(oracle.candidates[:-1]):
        if actual == earlier.content:
            if chosen.interrupted:
                return ["SEL-006"], "a later interrupted message must replace the earlier one"
            return ["SEL-001"], "the last non-empty message wins, not an earlier one"
    if isinstance(actual, list) and actual and all(b in chosen.content for b in actual if isinstance(b, dict)):
        return ["SEL-005"], "the selected message must be returned whole, every block and key"
    if _same_blocks(actual, chosen.content):  # every block there, in order, a value changed (an id, a text)
        return ["SEL-005"], "the selected message must be returned unchanged, every key and value (ids and texts too)"
    if not _has_visible_text(chosen.content):
        return ["SEL-002"], "a message without visible text is still non-empty and is selected"
    return ["SEL-001"], "the last non-empty message is the selection"


def _same_blocks(actual: Any, content: list[Json]) -> bool:
    """Whether ``actual`` holds the blocks of ``content``, in order, each with the same type and keys."""
    if not (isinstance(actual, list) and len(actual) == len(content)):
        return False
    return all(
        isinstance(got, dict) and got.get("type") == want.get("type") and set(got) == set(want)
        for got, want in zip(actual, content, strict=True)
    )


def _candidate_row(oracle: SelectionOracle) -> int:
    return next(i for i, r in oracle.reads if r["feeds"] == "candidate")


def _fallback(
    spec: Spec, binding: str, steps: list[Json], actual: Any, oracle: SelectionOracle, fold: Fold | None
) -> tuple[list[str], str]:
    text = oracle.fallback()
    if actual == [] and oracle.empty_messages:
        return ["SEL-003"], "an empty message never contributes: the streamed fallback decides"
    if actual is None or actual == []:
        if fold is not None and fallback_shown(spec, fold):
            rows = sorted({p.row for p in oracle.pieces})
            only_raw = all(p.origin.startswith("record:chunk") for p in oracle.pieces)
            if only_raw and all(row_read(spec, fold, binding, row) for row in rows):
                # it reads this binding's rows (their vectors come out right): only the raw records are lost
                return ["SEL-019"], "a raw text-delta chunk record's text is joined too"
            ids = [rid for row in rows for rid in _binding_requirement(spec, row)]
            return ids, "the adapter selects streamed text elsewhere, but not the pieces this binding's rows name"
        return ["SEL-008"], "no non-empty message was folded, so the streamed text is the selection"
    if not (isinstance(actual, list) and len(actual) == 1 and isinstance(actual[0], dict)):
        if isinstance(actual, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in actual):
            return ["SEL-010"], "a fallback selection is exactly one text block"
        return ["SEL-014"], "no non-empty message was folded; nothing but the fallback can be selected"
    block = actual[0]
    if block.get("type") != "text" or set(block) != {"type", "text"} or not isinstance(block.get("text"), str):
        return ["SEL-010"], 'a fallback selection is one block {"type": "text", "text": T} with no other keys'
    got = block["text"]
    for index, _row in oracle.reads:
        # A row the adapter never reads (no golden vector fed by it comes out right) is the
        # binding's misread, even where its missing pieces look like trimmed whitespace.
        without = "".join(p.text for p in oracle.pieces if p.row != index)
        if without != text and got == without and fold is not None and not row_read(spec, fold, binding, index):
            return _binding_requirement(spec, index), "the adapter reads none of the pieces this binding's row names"
    if got != text and (
        got in (text.strip(), text.rstrip(), text.lstrip(), " ".join(text.split()), text.replace("\r\n", "\n"))
        or any(got == unicodedata.normalize(form, text) for form in ("NFC", "NFD", "NFKC", "NFKD"))
    ):
        return ["SEL-011"], "the fallback text is kept exactly as streamed"
    raw = "".join(p.text for p in oracle.pieces if not p.origin.startswith("record:chunk"))
    if raw != text and got == raw:  # before the rows: a row read whole but for its raw records
        return ["SEL-019"], "a raw text-delta chunk record's text is joined too"
    for index, _row in oracle.reads:
        without = "".join(p.text for p in oracle.pieces if p.row != index)
        if without != text and got == without:
            return _binding_requirement(spec, index), "the pieces this binding's row names are missing"
    return _extra_text(spec, binding, steps, actual, oracle, default=["SEL-009"])


def _extra_text(
    spec: Spec,
    binding: str,
    steps: list[Json],
    actual: Any,
    oracle: SelectionOracle,
    default: list[str] | None = None,
) -> tuple[list[str], str]:
    other = _other_bindings(spec, binding)
    if other and _mutant(spec, binding, steps, extra_reads=other) == actual:
        return ["SEL-017"], "the other session format's stream carriers must be ignored"
    silent_records = spec.table("selection", "stream_records").rows
    records = tuple(r["record_type"] for r in silent_records if r["contributes"] == "nothing" and r["members"])
    chunks = tuple(r["chunk_type"] for r in spec.table("selection", "stream_chunks").rows if not r["contributes"])
    if _mutant(spec, binding, steps, contributing_records=records, contributing_chunks=chunks) == actual:
        return ["SEL-014"], "reasoning and other non-text pieces contribute nothing"
    if default is not None:
        return default, "the fallback is every piece, in step order, nothing de-duplicated or dropped"
    return ["SEL-014"], "only the fields table bindings names contribute"


def as_golden_vector(binding: str, covers: list[str], steps: list[Json], expected: Any) -> str:
    """A failing example written as a row for spec/selection.yaml's golden_vectors, ready to paste."""
    fields = {"binding": binding, "covers": covers, "steps": steps, "expected": expected}
    return pasteable_row("A log Hypothesis found", fields)


def _violation(
    ids: list[str], why: str, binding: str, steps: list[Json], expected: Any, actual: Any, operation: str, where: str
) -> Violation:
    payload: Json = (
        {"binding": binding, "steps": steps}
        if operation == "fold_output"
        else {"binding": binding, "events": [s["event"] for s in steps if "event" in s]}
    )
    return Violation(
        ids,
        operation=operation,
        input=payload,
        expected=expected,
        actual=actual,
        detail=f"{where}: {why}; " + difference(expected, actual),
        sections={
            "as a golden vector (spec/selection.yaml, table golden_vectors)": as_golden_vector(
                binding, ids, steps, expected
            )
        },
    )


def _is_empty_message(step: Json) -> bool:
    event = step.get("event")
    return (
        isinstance(event, dict)
        and event.get("type") == "assistant/message"
        and event.get("data", {}).get("message", {}).get("content") == []
    )


def check_selected(
    spec: Spec,
    binding: str,
    steps: list[Json],
    actual: Any,
    operation: str = "select_output",
    probe: Callable[[list[Json]], Any] | None = None,
    fold: Fold | None = None,
) -> None:
    """select_output (or a fold's last value) against the rule, blamed by diagnosis. ``probe``
    asks the adapter again about other steps: a whole-list ``[]`` where nothing is selected is
    an empty message taken as the answer (SEL-003) only if it goes away with the empty
    messages; otherwise it is how the adapter writes "nothing" (SEL-013). Streamed text in
    place of a message that the adapter selects from the steps up to that message is text that
    displaced it (SEL-004), as the fold shows it at the step that did. ``fold``: see diagnose."""
    expected = oracle_values(spec, binding, steps)[-1] if steps else None
    if actual == expected:
        return
    chosen = last_candidate(spec, binding, steps)

    def displaced() -> bool:
        return (
            probe is not None
            and chosen is not None
            and _streamed_after(spec, binding, steps, actual, chosen)
            and probe(steps[: chosen.step + 1]) == chosen.content
        )

    if not steps:
        if actual == []:
            ids, why = ["SEL-013"], "no events select nothing, which is null, not []"
        else:
            ids, why = ["SEL-024"], "an empty list of events selects null"
    elif expected is None and actual == [] and probe is not None and any(map(_is_empty_message, steps)):
        rest = [step for step in steps if not _is_empty_message(step)]
        if probe(rest) == []:
            ids, why = ["SEL-013"], "nothing is selected, which is null, not [] (with or without the empty messages)"
        else:
            ids, why = ["SEL-003"], "an empty message's content was taken as the answer"
    elif probe is not None and expected is not None and _clears(spec, binding, steps, actual):
        # Without the empty messages the adapter answers right: they, not the streamed text or
        # the message's shape, changed its answer (SEL-003).
        rest = [step for step in steps if not _is_empty_message(step)]
        if probe(rest) == oracle_values(spec, binding, rest)[-1]:
            ids, why = ["SEL-003"], "usage-only empty messages cleared the selected message (without them it is kept)"
        elif displaced():
            ids, why = ["SEL-004"], "text streamed after a non-empty message displaced it (up to it, it is selected)"
        else:
            ids, why = diagnose(spec, binding, steps, actual, fold=fold)
    elif displaced():
        ids, why = ["SEL-004"], "text streamed after a non-empty message displaced it (up to it, it is selected)"
    else:
        ids, why = diagnose(spec, binding, steps, actual, fold=fold)
    raise _violation(ids, why, binding, steps, expected, actual, operation, operation)


def _streamed_after(spec: Spec, binding: str, steps: list[Json], actual: Any, chosen: Candidate) -> bool:
    """Whether ``actual`` is streamed text, and some of it was streamed after ``chosen``."""
    oracle = SelectionOracle(spec, binding)
    for step in steps:
        oracle.push(step)
    return _streamed(actual, oracle) and any(p.step > chosen.step for p in oracle.pieces)


def _clears(spec: Spec, binding: str, steps: list[Json], actual: Any) -> bool:
    """Whether ``actual`` is what a fold that lets an empty message clear the message gives."""
    oracle = SelectionOracle(spec, binding)
    for step in steps:
        oracle.push(step)
    chosen = oracle.candidates[-1] if oracle.candidates else None
    return bool(chosen and oracle.empty_messages and oracle.empty_messages[-1] > chosen.step) and actual == _cleared(
        oracle
    )


def check_folded(spec: Spec, binding: str, steps: list[Json], actual: Any, fold: Fold | None = None) -> None:
    """fold_output's values against the rule after every prefix, blamed at the first that differs
    (``fold``: see diagnose)."""
    if not isinstance(actual, list) or len(actual) != len(steps):
        count = len(actual) if isinstance(actual, list) else type(actual).__name__
        raise Violation(
            ["SEL-025"],
            operation="fold_output",
            input={"binding": binding, "steps": steps},
            expected=f"one value per step ({len(steps)} steps)",
            actual=f"got {count}",
            detail=f"one value per step ({len(steps)} steps), got {count}",
        )
    found = first_fold_difference(spec, binding, steps, actual, fold)
    if found is not None:
        n, ids, why = found
        where = f"fold_output after step {n + 1} of {len(steps)}"
        want = oracle_values(spec, binding, steps[: n + 1])[-1]
        raise _violation(ids, why, binding, steps[: n + 1], want, actual[n], "fold_output", where)


def first_fold_difference(
    spec: Spec, binding: str, steps: list[Json], values: list[Any], fold: Fold | None = None
) -> tuple[int, list[str], str] | None:
    """The first step after which a fold's values differ from the rule's, with its blame: the
    step that made the difference decides the rule, so every test that sees the same fold blames
    the same requirement (None when every value is right; ``fold``: see diagnose)."""
    for n, (want, got) in enumerate(zip(oracle_values(spec, binding, steps), values, strict=True)):
        if want != got:
            ids, why = diagnose(spec, binding, steps[: n + 1], got, incremental=True, fold=fold)
            return n, ids, why
    return None


def assert_selection(
    binding: str, covers: list[str], steps: list[Json], expected: Any, actual: Any, what: str, operation: str = ""
) -> None:
    """Compare, and on a mismatch blame ``covers`` and print the case as a golden vector (for
    callers that know the requirement already; the tiers use :func:`check_selected`)."""
    if actual != expected:
        operation = operation or what.split()[0]
        raise _violation(covers, what, binding, steps, expected, actual, operation, what)
