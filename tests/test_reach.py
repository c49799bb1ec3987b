"""Nothing caught by chance: every row of every spec table is reached by a golden vector or a
stratified property in every run (conformance/verdict/reach.py), at any Hypothesis profile."""

from __future__ import annotations

from conformance.spec import load_spec
from conformance.verdict.coverage import collect_whole_suite
from conformance.verdict.reach import unreached


def test_every_table_row_is_reached_by_a_test() -> None:
    gate = collect_whole_suite()
    missing = unreached(load_spec(), gate.reached)
    assert not missing, f"{len(missing)} spec table row(s) no vector or stratified property reaches:\n  " + "\n  ".join(
        missing
    )


def test_every_structured_input_has_its_reads() -> None:
    """conformance/verdict/structured_reads.py names exactly the rows of redaction.structured_inputs."""
    from conformance.verdict.structured_reads import unmapped

    problems = unmapped(load_spec())
    assert not problems, "; ".join(problems)
