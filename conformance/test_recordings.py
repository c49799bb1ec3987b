"""Tier 2, real shapes: the recorded wire transcripts of the real products (fixtures/recordings/,
written by ``subagent-conformance products record``) replayed through codex_outcome and
claude_code_outcome, so the fakes and the generated scenarios stay tied to what the real
products send at the version the adapter claims.

Each recording is of one case of fixtures/recordings/cases.yaml run against one recorded
product release (``<product>/<release>/<case>.json``, the ``recorded`` one of its range); the session's
spec stands at the claimed release, so the recording replayed is that of its range and the
expected result is the case's at that range, rendered by the spec's format rules
(conformance.products.recordings.expected_results).
The transcript must also show what the case claims (the Codex terminal carries the wire form table
``variants`` gives the expected category; the Claude Code oracle built from the classification
table reads the transcript as the case expects), so a re-recording that changes the product's
behaviour fails here instead of silently moving the expectation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.adapter import Adapter
from conformance.products.packages import product_version
from conformance.products.recordings import Case, load_cases, load_recording, recording_file
from conformance.products.replay import replay
from conformance.spec import Spec, load_spec
from conformance.spec.resources import shown_data_path
from conformance.verdict.gaps import SuiteDataGap

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"claude_code_outcome", "codex_outcome"})

Claim = Callable[[str, str], None]
Json = Any
requirement = pytest.mark.requirement

_SPEC = load_spec()
CASES = load_cases(_SPEC)


def _recording(spec: Spec, case: Case, path: Path) -> Json:
    """The case's recording of the recorded release of the claimed release's range (a stale one
    would replay the wrong shapes)."""
    command = f"subagent-conformance products record --product {case.product} --version {case.recorded}"
    shown = shown_data_path(path)
    if not path.is_file():  # the suite's data lacks it: a gap of the suite, not the adapter's fault
        raise SuiteDataGap(
            f"{case.where}: case {case.id} has no recording of {case.product} {case.recorded} ({shown}); "
            f"record it with `{command} --case {case.name}`"
        )
    recording = load_recording(spec, path)
    package, _ = product_version(spec, case.product)
    if (recording["package"], recording["version"]) != (package, case.recorded):
        raise SuiteDataGap(
            f"{shown} records {recording['package']}@{recording['version']}, not {package}@{case.recorded}: "
            f"re-record it with `{command}`"
        )
    return recording


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=requirement(*c.covers)) for c in CASES])
def test_recording_replays(case: Case, spec: Spec, adapter: Adapter, claim: Claim) -> None:
    claim("providers", case.product)
    case = case.at(spec)  # the session's spec stands at the claimed release
    if case.recorded is None:  # the wire of the range was measured, but no recording of it is kept
        span = spec.areas[case.product].current
        pytest.skip(f"no recording is kept of the range {span.span if span else case.version} of {case.product}")
    path = recording_file(case.product, case.recorded, case.name)
    replay(spec, case, _recording(spec, case, path), adapter.call, path)
