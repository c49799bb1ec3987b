"""Every known-bad adapter must be rejected, by the requirements that should catch it."""

from __future__ import annotations

import pytest

from conformance.spec.resources import fixtures_dir
from conformance.verdict.selftest import KnownBad, known_bad_adapters, selection
from tests.conftest import RunSuite


@pytest.mark.parametrize("bad", known_bad_adapters(), ids=lambda bad: bad.module)
def test_known_bad_adapter_is_rejected(bad: KnownBad, run_suite: RunSuite) -> None:
    run = run_suite("-q", *selection(bad), impl=bad.module, importable=[fixtures_dir() / "known_bad"], report=True)
    assert run.code == 1, f"the suite accepted {bad.module} ({bad.bug}):\n{run.tail}"
    violated, wanted = set(run.violated()), set(bad.caught_by)
    missing, wider = ", ".join(sorted(wanted - violated)) or "-", ", ".join(sorted(violated - wanted)) or "-"
    assert violated == wanted, (  # exact blame: exactly what it breaks, nothing wider
        f"{bad.module} should violate exactly {', '.join(sorted(wanted))}; it violated "
        f"{', '.join(sorted(violated)) or 'nothing'} (missing: {missing}; over-blamed: {wider})\n{run.tail}"
    )
