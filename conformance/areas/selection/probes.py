"""What a diagnosis asks the adapter again when one value cannot tell two rules apart.

A fold that selects nothing where the rule selects streamed text either has no fallback at all
(SEL-008) or does not read the rows of this binding (the binding's rule, SEL-015/016/021); a
fold missing one row's pieces either misreads that row or trims what it read (SEL-011). The
adapter's own fold over the spec's golden vectors tells them apart: does it select streamed text
in any binding it claims, does it get the vectors fed by that row right.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.areas.selection.oracle import Candidate, Json, SelectionOracle
from conformance.spec import Spec

# The adapter's fold_output values over ``steps`` for a binding it claims, else None.
Fold = Callable[[str, list[Json]], Any]


def last_candidate(spec: Spec, binding: str, steps: list[Json]) -> Candidate | None:
    """The last message candidate the rule folds from ``steps`` (None before any)."""
    oracle = SelectionOracle(spec, binding)
    for step in steps:
        oracle.push(step)
    return oracle.candidates[-1] if oracle.candidates else None


def fallback_shown(spec: Spec, fold: Fold) -> bool:
    """Whether the adapter's fold selects streamed text at all: on some golden vector whose
    selection is the fallback (no non-empty message), of a binding it claims, its last value is a
    selection. An adapter that never shows one has no fallback (SEL-008); one that does, but not
    from a binding's rows, misreads that binding."""
    for vector in spec.table("selection", "golden_vectors").rows:
        if vector["expected"] is None or last_candidate(spec, vector["binding"], vector["steps"]) is not None:
            continue
        values = fold(vector["binding"], vector["steps"])
        if isinstance(values, list) and values and isinstance(values[-1], list) and values[-1]:
            return True
    return False


def row_read(spec: Spec, fold: Fold, binding: str, row: int) -> bool:
    """Whether the adapter reads row ``row`` of table bindings in a fold of ``binding``: some
    golden vector whose selection is a fallback with a piece from that row comes out right (True
    when the spec has no such vector, or the adapter does not claim the binding: nothing says no)."""
    tried = False
    for vector in spec.table("selection", "golden_vectors").rows:
        if vector["expected"] is None or vector["binding"] != binding:
            continue
        oracle = SelectionOracle(spec, binding)
        for step in vector["steps"]:
            oracle.push(step)
        if oracle.message is not None or not any(p.row == row for p in oracle.pieces):
            continue
        values = fold(binding, vector["steps"])
        if values is None:
            return True
        tried = True
        if isinstance(values, list) and values[-1:] == [vector["expected"]]:
            return True
    return not tried
