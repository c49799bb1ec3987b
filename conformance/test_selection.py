"""Tier 2, selection: golden vectors and properties of select_output and fold_output.

Every expected value comes from the spec: a golden vector's ``expected``, or the oracle
built from the selection tables. A failure is blamed on the rule that tells the adapter's
value from the rule's (conformance/areas/selection/blame.py), not on every marker of its test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.areas.selection.blame import check_folded, check_selected, first_fold_difference
from conformance.areas.selection.oracle import (
    STREAM_RULES,
    SelectionOracle,
    oracle_values,
    reached_rows,
    stream_rules_reached,
)
from conformance.areas.selection.probes import Fold
from conformance.areas.selection.strategies import empty_message_logs, raw_text_logs, steps_for, unicode_id_logs
from conformance.harness.adapter import Adapter
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation, golden_vector
from conformance.verdict.reach import row_params, share

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"fold_output", "select_output"})

Claim = Callable[[str, str], None]
Json = dict[str, Any]
Unchecked = Callable[[Iterable[str], str], None]  # the unchecked fixture (conformance/conftest.py)
requirement = pytest.mark.requirement

_SPEC = load_spec()
_BINDINGS = _SPEC.table("selection", "bindings").rows
EVENT_BINDINGS = sorted({r["binding"] for r in _BINDINGS if r["step_kind"] == "event"})
ALL_BINDINGS = [*EVENT_BINDINGS, *sorted({r["binding"] for r in _BINDINGS} - set(EVENT_BINDINGS))]
MESSAGE_RULES = [f"SEL-{n:03d}" for n in range(1, 8)]  # the candidate: SEL-001 to SEL-007
FALLBACK_RULES = [f"SEL-{n:03d}" for n in range(8, 14)]  # the fallback: SEL-008 to SEL-013


def binding_requirements(binding: str) -> list[str]:
    """The rules a fold of ``binding`` can show, from its rows of table bindings: the binding's own
    rule (column requirement), the message rules where it has a candidate, the fallback rules,
    what only event steps carry (SEL-014: fields that never contribute; SEL-017: the other
    format's carriers) and, where it reads a ``data.stream``, the stream readers' SEL-018/019.
    A test parametrized by binding carries them per parameter: a requirement is checked only
    where the adapter claims a binding that has it."""
    rows = [r for r in _BINDINGS if r["binding"] == binding]
    ids = [rid for r in rows for rid in r["requirement"]]
    if any(r["feeds"] == "candidate" for r in rows):
        ids += MESSAGE_RULES
    if any(r["feeds"] == "fallback" for r in rows):
        ids += FALLBACK_RULES
    if any(r["step_kind"] == "event" for r in rows):
        ids += ["SEL-014", "SEL-017"]
    if any(r["reads"] == "data.stream" for r in rows):
        ids += ["SEL-018", "SEL-019"]
    return sorted(set(ids))


def _by_binding(bindings: list[str], *also: str) -> list[Any]:
    return [pytest.param(b, id=b, marks=[requirement(*binding_requirements(b), *also)]) for b in bindings]


def _vector_marks(vector: Json) -> list[pytest.MarkDecorator]:
    """A vector's coverage, and the rows of tables bindings, stream_records and stream_chunks
    it exercises: the rule reads them from its steps (reached_rows), so checking its value
    checks how each is read. Every row of those tables is reached by some vector."""
    reached = sorted(reached_rows(_SPEC, vector["binding"], vector["steps"]))
    return [requirement("SEL-027", *vector["covers"]), *(pytest.mark.reaches(t, i) for t, i in reached)]


def _probe(adapter: Adapter, binding: str) -> Callable[[list[Json]], Any]:
    return lambda steps: adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})


def _fold(adapter: Adapter) -> Fold:
    """The adapter's fold for any binding it claims, for a diagnosis to ask again."""

    def fold(binding: str, steps: list[Json]) -> Any:
        if not adapter.claims("bindings", binding):
            return None
        return adapter.call("fold_output", {"binding": binding, "steps": steps})

    return fold


def _fixed(binding: str) -> list[list[Json]]:
    """The fixed logs an event binding's properties check before they draw: branches a draw
    reaches only by chance, here in every run whatever the profile or seed (issue #28, item 6).
    SEL-003's fallback branch: an empty message folded while no non-empty message exists."""
    return empty_message_logs(binding) if binding in EVENT_BINDINGS else []


def _events(steps: list[Json]) -> list[Json] | None:
    events = [step["event"] for step in steps if "event" in step]
    return events if len(events) == len(steps) else None


@pytest.mark.parametrize("vector", row_params(_SPEC, "selection", "golden_vectors", marks=_vector_marks))
def test_golden_vector(adapter: Adapter, claim: Claim, spec: Spec, vector: Json) -> None:
    binding, steps = vector["binding"], vector["steps"]
    claim("bindings", binding)
    with golden_vector(spec, "selection", "golden_vectors", vector, operations=OPERATIONS):
        values = adapter.call("fold_output", {"binding": binding, "steps": steps})
        check_folded(spec, binding, steps, values, fold=_fold(adapter))
        events = _events(steps)
        if events is not None and binding in EVENT_BINDINGS:
            actual = adapter.call("select_output", {"binding": binding, "events": events})
            check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding), fold=_fold(adapter))


_NEVER_STREAMED = {
    "SEL-018": "its condition never arose: no answer the rule gives for this test's examples came from a data.stream",
    "SEL-019": "its condition never arose: no answer the rule gives for this test's examples came from a raw "
    "text-delta chunk record of a data.stream",
}


def _streams_unreached(unchecked: Unchecked, reached: set[str]) -> None:
    """SEL-018/SEL-019 were checked only if an example's answer came from a stream (STREAM_RULES)."""
    for rid in sorted(set(STREAM_RULES) - reached):
        unchecked([rid], _NEVER_STREAMED[rid])


@pytest.mark.parametrize("binding", _by_binding(EVENT_BINDINGS, "SEL-024"))
def test_select_output_follows_the_rule(
    adapter: Adapter, claim: Claim, spec: Spec, binding: str, unchecked: Unchecked
) -> None:
    claim("bindings", binding)
    reached: set[str] = set()

    def verify(steps: list[Json]) -> None:
        actual = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding), fold=_fold(adapter))
        reached.update(stream_rules_reached(spec, binding, steps, final=True))

    for fixed in _fixed(binding):  # the branches chance may miss, in every run (issue #28, item 6)
        verify(fixed)
    given(steps=steps_for(binding))(verify)()
    _streams_unreached(unchecked, reached)


@pytest.mark.parametrize("binding", _by_binding(ALL_BINDINGS, "SEL-025", "SEL-026"))
def test_fold_after_every_prefix_is_the_rule_on_that_prefix(
    adapter: Adapter, claim: Claim, spec: Spec, binding: str, unchecked: Unchecked
) -> None:
    claim("bindings", binding)
    reached: set[str] = set()

    def verify(steps: list[Json]) -> None:
        values = adapter.call("fold_output", {"binding": binding, "steps": steps})
        check_folded(spec, binding, steps, values, fold=_fold(adapter))
        reached.update(stream_rules_reached(spec, binding, steps))

    for fixed in _fixed(binding):
        verify(fixed)
    given(steps=steps_for(binding))(verify)()
    _streams_unreached(unchecked, reached)


@requirement("SEL-024")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_select_output_equals_the_folds_last_value(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)

    @given(steps=steps_for(binding))
    def check(steps: list[Json]) -> None:
        folded = adapter.call("fold_output", {"binding": binding, "steps": steps})
        events = [s["event"] for s in steps]
        selected = adapter.call("select_output", {"binding": binding, "events": events})
        if selected != (folded[-1] if isinstance(folded, list) and folded else None):
            # One input, one blame: whichever of the two leaves the rule is blamed as the test of
            # that operation blames it (the rule's value is what both must equal).
            check_folded(spec, binding, steps, folded, fold=_fold(adapter))
            check_selected(spec, binding, steps, selected, probe=_probe(adapter, binding), fold=_fold(adapter))

    check()


@requirement("SEL-022")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_pushed_text_shares_the_fallback_with_events(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    claim("bindings", binding)
    claim("bindings", "text-stream")
    fold = _fold(adapter)

    def verify(mixed: list[Json]) -> None:
        actual = adapter.call("fold_output", {"binding": binding, "steps": mixed})
        whole = isinstance(actual, list) and len(actual) == len(mixed)
        # The step that first made the fold wrong decides (first_fold_difference), as in every
        # other test of the same fold; SEL-022 only where that rule cannot be the one that broke.
        found = first_fold_difference(spec, binding, mixed, actual, fold) if whole else None
        if found is not None and _kept_apart(spec, fold, binding, mixed[: found[0] + 1], actual[found[0]]):
            prefix = mixed[: found[0] + 1]
            raise Violation(
                ["SEL-022"],
                operation="fold_output",
                input={"binding": binding, "steps": mixed},
                expected=oracle_values(spec, binding, prefix)[-1],
                actual=actual[found[0]],
                detail=f"fold_output after step {found[0] + 1} of {len(mixed)}: pushed text and event "
                "pieces go to one fallback buffer, in step order; the value holds the pieces of one kind only",
            )
        check_folded(spec, binding, mixed, actual, fold)

    for fixed in _fixed(binding):  # pushed text before and after each fixed log
        verify([{"text": "pushed "}, *fixed])
        verify([*fixed, {"text": " pushed"}])

    @given(steps=steps_for(binding), texts=steps_for("text-stream"), data=st.data())
    def check(steps: list[Json], texts: list[Json], data: st.DataObject) -> None:
        mixed = list(steps)
        for text in texts:
            mixed.insert(data.draw(st.integers(0, len(mixed))), text)
        verify(mixed)

    check()


def _kept_apart(spec: Spec, fold: Fold, binding: str, prefix: list[Json], got: Any) -> bool:
    """Whether a fold of mixed steps kept the two kinds of piece in buffers of their own (SEL-022):
    no message decides yet, its value is the fallback of one kind of step alone or of both kinds
    one after the other, and it folds each kind alone right, so neither kind's own rule broke."""
    oracle = SelectionOracle(spec, binding)
    for step in prefix:
        oracle.push(step)
    if oracle.message is not None or not (isinstance(got, list) and got):
        return False
    parts = [(binding, [s for s in prefix if "event" in s]), ("text-stream", [s for s in prefix if "text" in s])]
    alone = [oracle_values(spec, b, part)[-1] if part else None for b, part in parts]
    texts = [value[0]["text"] if value else "" for value in alone]
    apart = [*alone, *([{"type": "text", "text": t}] for t in (texts[0] + texts[1], texts[1] + texts[0]) if t)]
    if got not in apart:
        return False
    for (b, part), want in zip(parts, alone, strict=True):
        values = fold(b, part) if part else [None]
        if not isinstance(values, list) or values[-1:] != [want]:
            return False
    return True


# ---------------------------------------------------------------- strata reached in every run

#: The bindings that read a data.stream (their raw text-delta records: SEL-019).
STREAM_BINDINGS = [b for b in EVENT_BINDINGS if "SEL-019" in binding_requirements(b)]


def _fallback_marks(binding: str, *also: str) -> list[pytest.MarkDecorator]:
    """The rules of ``binding`` a log without any message can show: all but the message rules
    and the other format's carriers (SEL-017), which such a log never holds."""
    ids = [rid for rid in binding_requirements(binding) if rid not in MESSAGE_RULES and rid != "SEL-017"]
    return [requirement(*ids, *also)]


@pytest.mark.parametrize("binding", [pytest.param(b, id=b, marks=_fallback_marks(b)) for b in STREAM_BINDINGS])
def test_raw_text_delta_records_feed_the_fallback(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    """The raw text-delta stratum (strategies.raw_text_logs): in every example no message is
    folded and the answer holds a raw chunk record's text, so SEL-019 is checked by properties in
    every run, whatever the profile, not only by its golden vectors."""
    claim("bindings", binding)

    @share(4)
    @given(steps=raw_text_logs(binding))
    def check(steps: list[Json]) -> None:
        assert "SEL-019" in stream_rules_reached(spec, binding, steps, final=True), "the stratum lost its raw record"
        values = adapter.call("fold_output", {"binding": binding, "steps": steps})
        check_folded(spec, binding, steps, values, fold=_fold(adapter))
        actual = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding), fold=_fold(adapter))

    check()


@requirement("SEL-001", "SEL-005", "SEL-008", "SEL-011")
@pytest.mark.parametrize("binding", EVENT_BINDINGS)
def test_unicode_ids_and_texts_are_kept_whole(adapter: Adapter, claim: Claim, spec: Spec, binding: str) -> None:
    """Fixed logs (strategies.unicode_id_logs): a selected message's tool-call ids and names with
    astral characters, right-to-left text and combining marks, long enough to show a cut, and
    such text in the fallback, are returned unchanged, in every run."""
    claim("bindings", binding)
    for steps in unicode_id_logs(binding):
        values = adapter.call("fold_output", {"binding": binding, "steps": steps})
        check_folded(spec, binding, steps, values, fold=_fold(adapter))
        actual = adapter.call("select_output", {"binding": binding, "events": [s["event"] for s in steps]})
        check_selected(spec, binding, steps, actual, probe=_probe(adapter, binding), fold=_fold(adapter))
