"""Every known-bad adapter must be rejected, by the requirements that should catch it."""

from __future__ import annotations

import pytest

from conformance.selftest import KnownBad, known_bad_adapters, run_inline


@pytest.mark.parametrize("bad", known_bad_adapters(), ids=lambda bad: bad.module)
def test_known_bad_adapter_is_rejected(bad: KnownBad) -> None:
    verdict = run_inline(bad.module, bad.tiers, bad.caught_by)
    assert verdict.exit_code == 1, f"the suite accepted {bad.module} ({bad.bug}):\n{verdict.output}"
    missing = set(bad.caught_by) - set(verdict.violated)
    assert not missing, (
        f"{bad.module} was rejected by {', '.join(verdict.violated)}, but not by {', '.join(sorted(missing))}"
    )
