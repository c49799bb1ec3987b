"""Text strategies for any string JSON can carry, drawn without Hypothesis' codec scan.

Hypothesis' default ``st.text()`` alphabet is ``characters(codec="utf-8")``: every process
without a ``.hypothesis/unicode_data`` cache in its working folder (each xdist worker, each
run from a fresh folder) first encodes every code point to learn which are UTF-8 — 4–8 s.
UTF-8 encodes every code point but the surrogates, so excluding category ``Cs`` draws from
exactly the same characters, from the category table Hypothesis ships (well under a second).
Surrogates cannot appear in the JSON the suite exchanges anyway.
"""

from __future__ import annotations

from hypothesis import strategies as st

#: Every code point UTF-8 (and so JSON text) can carry: all of Unicode but the surrogates.
ANY_CHARACTER = st.characters(exclude_categories=["Cs"])


def any_text(*, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """What ``st.text(min_size=, max_size=)`` draws, without its per-process codec scan."""
    return st.text(ANY_CHARACTER, min_size=min_size, max_size=max_size)
