"""Checks of bound_diagnostic shared by the diagnostic tiers (its golden vectors and its
properties): whether the bound applies to an adapter at all, and the violation a wrong answer
is blamed as, DIA-019 for a text within the limit, DIA-020 for a longer one.
"""

from __future__ import annotations

import pytest

from conformance.areas.diagnostic.oracle import Bound
from conformance.areas.diagnostic.text_blame import as_vector
from conformance.harness.adapter import Adapter
from conformance.verdict.blame import Violation, text_difference, utf8_size
from conformance.verdict.report import NOT_APPLICABLE


def bound_applicable(adapter: Adapter) -> None:
    """Skip, as not applicable, an adapter that does not implement bound_diagnostic (it claims
    nothing that bounds a diagnostic: table operations, column required_when)."""
    if not adapter.claims("operations", "bound_diagnostic"):
        pytest.skip(f"{NOT_APPLICABLE}{adapter.impl} does not implement operation 'bound_diagnostic'")


def bound_violation(
    bound: Bound, text: str, expected: str, actual: str, sections: dict[str, str] | None = None
) -> Violation:
    """DIA-019 for a text within the limit, DIA-020 for a longer one; the detail gives both byte
    counts and the first differing byte."""
    size = utf8_size(text)
    # An adapter's text may hold a lone surrogate: counted and shown as a lenient encoder writes it.
    want, got = expected.encode("utf-8", "surrogatepass"), actual.encode("utf-8", "surrogatepass")
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
    lo = max(0, at - 8)
    detail = (
        f"input {size} bytes; expected {len(want)} bytes, got {len(got)} bytes; first differing byte at offset "
        f"{at}: expected {want[at : at + 1].hex() or 'end of text'}, got {got[at : at + 1].hex() or 'end of text'} "
        f"(bytes {lo}..{at + 8}: expected {want[lo : at + 8]!r}, got {got[lo : at + 8]!r}); "
        + text_difference(expected, actual)
    )
    return Violation(
        ["DIA-019" if size <= bound.limit else "DIA-020"],
        operation="bound_diagnostic",
        input={"text": text},
        expected={"text": expected},
        actual={"text": actual},
        detail=detail,
        sections=sections,
    )


def bound_as_vector(bound: Bound, text: str, expected: str) -> dict[str, str]:
    """A failing example as a paste-ready row of diagnostic.yaml's bound_vectors."""
    row = {
        "name": "found-by-property",
        "covers": ["DIA-019" if len(text.encode()) <= bound.limit else "DIA-020"],
        "input_bytes": len(text.encode()),
        "expected_bytes": len(expected.encode()),
        "input": text,
        "expected": expected,
    }
    return as_vector("spec/diagnostic.yaml bound_vectors", row)
