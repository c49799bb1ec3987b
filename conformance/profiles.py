"""The Hypothesis profiles of the suite."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings


def register_profiles() -> None:
    # "default" for development; "ci" derandomized so that a CI log reproduces; "thorough"
    # for deeper runs before a release or a product-version bump; "selftest" finds a
    # known-bad adapter fast and skips shrinking, since only the verdict matters there.
    settings.register_profile("default", max_examples=100, deadline=None)
    settings.register_profile(
        "ci",
        max_examples=100,
        deadline=None,
        derandomize=True,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "thorough",
        max_examples=2000,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "selftest",
        max_examples=100,
        deadline=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
