"""Nothing caught by chance: every row of every spec table is reached by a golden vector or a
stratified property in every run (conformance/verdict/reach.py), at any Hypothesis profile."""

from __future__ import annotations

import pytest

from conformance.spec import load_spec
from conformance.verdict.coverage import RequirementGate, collect_whole_suite
from conformance.verdict.reach import branches, unreached, unreached_branches

# Tables whose rows are not asked of an adapter, so no adapter test can reach them, with why.
NOT_ASKED = {
    "redaction.leak_vectors": "examples for the suite's own grammar (conformance/test_spec.py), not adapter inputs",
}


@pytest.fixture(scope="module")
def gate() -> RequirementGate:
    return collect_whole_suite()


def test_every_table_row_is_reached_by_a_test(gate: RequirementGate) -> None:
    missing = unreached(load_spec(), gate.reached)
    assert not missing, f"{len(missing)} spec table row(s) no vector or stratified property reaches:\n  " + "\n  ".join(
        missing
    )


def test_every_structured_input_has_its_reads() -> None:
    """conformance/verdict/structured_reads.py names exactly the rows of redaction.structured_inputs."""
    from conformance.verdict.structured_reads import unmapped

    problems = unmapped(load_spec())
    assert not problems, "; ".join(problems)


def test_every_branch_a_requirement_names_is_reached_by_its_tests(gate: RequirementGate) -> None:
    """Each row a requirement names as its branch (every vector of a table it says holds, each row
    whose cells name it) is reached by a test that names the requirement: a vector or a stratum,
    reached in every run whatever the profile or seed (issue #28, item 6)."""
    missing = unreached_branches(load_spec(), gate.reached_by, exempt=NOT_ASKED)
    assert not missing, f"{len(missing)} requirement branch(es) no test of the requirement reaches:\n  " + "\n  ".join(
        missing
    )


def test_a_requirements_branches_come_from_its_rows(gate: RequirementGate) -> None:
    """What the audit above counts: a vectors-hold requirement owns every vector of its table; a
    rule owns the rows that name it and not the others of a table it names; a requirement whose
    tests reach none of them has every one listed."""
    spec = load_spec()
    found = branches(spec)
    before = set(unreached_branches(spec, gate.reached_by, exempt=NOT_ASKED))
    unreached_dia = set(unreached_branches(spec, {**gate.reached_by, "DIA-019": set()}, exempt=NOT_ASKED)) - before
    assert len(unreached_dia) == len(found["DIA-019"]) > 0
    assert all(line.startswith("DIA-019: diagnostic.bound_vectors[") for line in unreached_dia)
    assert found["SEL-027"] == {
        ("selection.golden_vectors", i) for i in range(len(spec.table("selection", "golden_vectors").rows))
    }
    bound = spec.table("diagnostic", "bound_vectors").rows
    assert (
        {i for t, i in found["DIA-019"] if t == "diagnostic.bound_vectors"}
        == {i for i, row in enumerate(bound) if "DIA-019" in row["covers"]}
        != set(range(len(bound)))
    )


def test_a_table_of_data_is_a_branch_of_the_requirements_it_lists() -> None:
    """A table whose rows name no requirement gives each row to every requirement it lists, or
    to the narrower `branches` the spec states with its reason; an excluded requirement (no test)
    gets none; rows that name requirements (exec_limits' `read_by`) are theirs alone."""
    spec = load_spec()
    found = branches(spec)

    def rows(table: str, rid: str) -> set[int]:
        return {i for t, i in found[rid] if t == table}

    stages = set(range(len(spec.table("claude-code", "stages").rows)))
    assert rows("claude-code.stages", "CC-002") == stages  # listed by the table, the default
    operations = set(range(len(spec.table("adapter-protocol", "operations").rows)))
    assert rows("adapter-protocol.operations", "ADP-008") == operations  # narrowed to ADP-008
    assert rows("adapter-protocol.operations", "ADP-007") == set()
    assert not any(t == "claude-code.sdk_wire" for rids in found.values() for t, _ in rids)  # branches: []
    limits = spec.table("adapter-protocol", "exec_limits").rows
    assert (
        rows("adapter-protocol.exec_limits", "ADP-019")
        == {i for i, r in enumerate(limits) if "ADP-019" in r["read_by"]}
        == {i for i, r in enumerate(limits) if r["name"] in ("stderr_tail", "exit_reap", "stopped_grace")}
    )
    excluded = [req.id for req in spec.requirements() if req.excluded is not None]
    assert excluded and not any(rid in found for rid in excluded)
