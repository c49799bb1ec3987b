"""spec/seeds/ holds verbatim copies of the user's seed notes (the normative source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.spec.resources import spec_dir

SHARED_SEEDS = Path(__file__).resolve().parent.parent.parent / "shared" / "seeds"


@pytest.mark.skipif(
    not SHARED_SEEDS.is_dir(), reason=f"the shared seed folder {SHARED_SEEDS} is not beside this checkout"
)
def test_seed_copies_are_verbatim() -> None:
    shipped = {p.name: p.read_bytes() for p in (spec_dir() / "seeds").glob("*.txt")}
    originals = {p.name: p.read_bytes() for p in SHARED_SEEDS.glob("*.txt")}
    assert shipped == originals, "spec/seeds/ must be byte-identical to the seed notes; copy them again"
