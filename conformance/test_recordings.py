"""Tier 2, real shapes: the recorded wire transcripts of the real products (fixtures/recordings/,
written by ``subagent-conformance products record``) replayed through codex_outcome and
claude_code_outcome, so the fakes and the generated scenarios stay tied to what the locked
products really send.

Each recording is of one case of fixtures/recordings/cases.yaml. The expected result is the
case's, rendered by the spec's format rules (conformance.products.recordings.expected_results); the
transcript must also show what the case claims (the Codex terminal carries the wire form table
``variants`` gives the expected category; the Claude Code oracle built from the
classification table reads the transcript as the case expects), so a re-recording that
changes the product's behaviour fails here instead of silently moving the expectation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conformance.harness.adapter import Adapter
from conformance.products.packages import locked
from conformance.products.recordings import Case, load_cases, load_recording, recording_file
from conformance.products.replay import replay
from conformance.spec import Spec, load_spec

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"claude_code_outcome", "codex_outcome"})

Claim = Callable[[str, str], None]
Json = Any
requirement = pytest.mark.requirement

_SPEC = load_spec()
CASES = load_cases(_SPEC)


def _recording(spec: Spec, case: Case) -> Json:
    """The case's recording, of the locked version (a stale one would replay the wrong shapes)."""
    path = recording_file(case.product, case.name)
    if not path.is_file():
        pytest.fail(
            f"{case.where}: case {case.id} has no recording {path}; run "
            f"`subagent-conformance products record --product {case.product} --case {case.name}`",
            pytrace=False,
        )
    recording = load_recording(spec, path)
    package, version = locked(spec, case.product)
    assert (recording["package"], recording["version"]) == (package, version), (
        f"{path} records {recording['package']}@{recording['version']}, but the spec locks {package}@{version}: "
        "re-record with `subagent-conformance products record`"
    )
    return recording


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=requirement(*c.covers)) for c in CASES])
def test_recording_replays(case: Case, spec: Spec, adapter: Adapter, claim: Claim) -> None:
    claim("providers", case.product)
    replay(spec, case, _recording(spec, case), adapter.call, recording_file(case.product, case.name))
