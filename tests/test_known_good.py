"""Every known-good variant passes: a correct implementation that makes other internal choices
than the reference must never be rejected (a false rejection is a failing self-test)."""

from __future__ import annotations

import pytest

from conformance.spec.resources import fixtures_dir
from conformance.verdict.selftest import KnownGood, known_good_adapters, tier_modules
from tests.conftest import RunSuite


@pytest.mark.parametrize("good", known_good_adapters(), ids=lambda good: good.module)
def test_known_good_variant_passes(good: KnownGood, run_suite: RunSuite) -> None:
    importable = [fixtures_dir() / "known_good"]
    run = run_suite("-q", *tier_modules(good.tiers), impl=good.module, importable=importable, report=True)
    assert run.code == 0 and not run.violated(), (
        f"the suite rejected {good.module}, a correct implementation ({good.choice}): it violated "
        f"{', '.join(run.violated()) or 'nothing'}\n{run.tail}"
    )


def test_there_are_known_good_variants_of_every_area_with_a_choice() -> None:
    """At least four variants, each making a stated choice, listed once."""
    adapters = known_good_adapters()
    assert len(adapters) >= 4, f"only {len(adapters)} known-good variant(s) in fixtures/known_good/*.yaml"
    assert len({a.module for a in adapters}) == len(adapters), "a known-good module is listed twice"
    assert all(a.choice.strip() and a.tiers for a in adapters)
