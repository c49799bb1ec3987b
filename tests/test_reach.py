"""Nothing caught by chance: every row of every spec table is reached by a golden vector or a
stratified property in every run (conformance/reach.py), at any Hypothesis profile."""

from __future__ import annotations

from conformance.coverage import collect_whole_suite
from conformance.reach import unreached
from conformance.spec import load_spec


def test_every_table_row_is_reached_by_a_test() -> None:
    gate = collect_whole_suite()
    missing = unreached(load_spec(), gate.reached)
    assert not missing, f"{len(missing)} spec table row(s) no vector or stratified property reaches:\n  " + "\n  ".join(
        missing
    )
