"""Red runs over exec are bounded (issue #30, item 5): an exec adapter's tests run under a variant
of the chosen profile without Hypothesis's explain phase, and with the successful shrinks of an
example bounded through the engine's MAX_SHRINKS, which this test notices if a release drops it.
The cost itself is measured by benchmarks/red_run.py, never asserted on time here."""

from __future__ import annotations

from hypothesis import Phase, settings
from hypothesis.internal.conjecture import engine

from conformance.harness import profiles


def test_every_profile_has_an_exec_variant_without_the_explain_phase() -> None:
    previous = settings.get_current_profile_name()
    try:
        for name in profiles.PROFILES:
            profiles.load(name)
            plain = set(settings.default.phases)
            profiles.load(name, over_exec=True)
            over_exec = set(settings.default.phases)
            assert over_exec == plain - {Phase.explain}, name
            assert settings.default.max_examples == profiles.PROFILES[name]["max_examples"], name
    finally:
        settings.load_profile(previous)


def test_shrinking_over_exec_is_bounded_and_restored() -> None:
    before = engine.MAX_SHRINKS  # the engine's own knob: gone in a release, this fails
    with profiles.bounded_shrinking(over_exec=True):
        assert engine.MAX_SHRINKS == min(before, profiles.EXEC_MAX_SHRINKS) < 500
    assert before == engine.MAX_SHRINKS
    with profiles.bounded_shrinking(over_exec=False):
        assert before == engine.MAX_SHRINKS
