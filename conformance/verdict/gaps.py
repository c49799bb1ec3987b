"""Gaps in the suite's own data: a test that needs data the suite ships (the recording of the
claimed release's range, fixtures/recordings/) and finds none cannot say anything about the
adapter. Such a failure is the suite's, never charged to the adapter (ADP-022): its test is an
``error`` blaming no requirement, the requirements it checks are ``not-testable`` naming the
gap, and the run is incomplete, never conforming."""

from __future__ import annotations

DATA_GAP_PROPERTY = "data_gap"  # a test's user property: what data the suite lacks, and how to make it


class SuiteDataGap(Exception):
    """The suite lacks data a test needs; the message names the file and the command that makes it."""


def data_gap(exc: BaseException) -> str | None:
    """The gap a failure reports, or None when it is no gap of the suite's data."""
    leaves = exc.exceptions if isinstance(exc, BaseExceptionGroup) else (exc,)
    found = [str(leaf) for leaf in leaves if isinstance(leaf, SuiteDataGap)]
    return "; ".join(found) if found and len(found) == len(leaves) else None
