"""The pytest plugin (entry point ``pytest11``): profiles, the report header, requirement markers."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings

import conformance
from conformance.spec import SpecError, load_spec

# "default" for development, "ci" derandomized so a run is reproducible from its log,
# "thorough" for deeper runs before a release or a product-version bump.
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
    phases=list(Phase),
    verbosity=Verbosity.normal,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("SUBAGENT_CONFORMANCE_PROFILE", "ci" if os.environ.get("CI") else "default"))

REQUIREMENT_MARKER = "requirement"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{REQUIREMENT_MARKER}(*ids): the spec requirement IDs a conformance test checks (e.g. SEL-001)",
    )


def pytest_report_header(config: pytest.Config) -> list[str]:
    try:
        spec = load_spec()
        spec_line = f"spec {spec.version} ({sum(1 for _ in spec.requirements())} requirements)"
    except SpecError as exc:
        spec_line = f"spec: DOES NOT LOAD ({len(exc.problems)} problems)"
    profile = settings.get_current_profile_name()
    current = settings()
    seed = config.getoption("hypothesis_seed", default=None)
    how = "derandomized" if current.derandomize else f"seed {seed}" if seed is not None else "random seed"
    return [
        f"subagent-conformance {conformance.__version__}, {spec_line}",
        f"hypothesis profile {profile!r}: {current.max_examples} examples per property, {how}",
    ]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """A marker naming an ID the spec does not define is a broken test, not a pass."""
    marked = [(item, mark) for item in items for mark in item.iter_markers(REQUIREMENT_MARKER)]
    if not marked:
        return
    known = {req.id for req in load_spec().requirements()}
    unknown = sorted({f"{item.nodeid}: {rid}" for item, mark in marked for rid in mark.args if rid not in known})
    if unknown:
        raise pytest.UsageError("requirement markers name IDs the spec does not define:\n  " + "\n  ".join(unknown))
