"""A broken spec must be rejected with the file, the line and the field that are wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.spec import Problem, SpecError, load_spec
from tests.conftest import Edit


def problems(root: Path) -> list[Problem]:
    with pytest.raises(SpecError) as caught:
        load_spec(root)
    return caught.value.problems


def test_the_shipped_spec_loads() -> None:
    assert sum(1 for _ in load_spec().requirements()) > 100


def test_schema_violation_names_file_line_and_field(spec_copy: Path, edit: Edit) -> None:
    line = edit("codex.yaml", r"(?<=level: )MUST", "MAY")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("codex.yaml", line)
    assert problem.field.startswith("requirements[") and problem.field.endswith("].level")
    assert "'MAY' is not one of" in problem.message
    assert str(problem).startswith(f"codex.yaml:{line}: requirements[")


def test_undeclared_vocabulary_value_is_named(spec_copy: Path, edit: Edit) -> None:
    # Area schemas pin most vocabularies themselves; the loader's own check must catch an
    # undeclared value even where a schema does not, so give results.yaml the bare area schema.
    (spec_copy / "schema" / "results.json").write_text(
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:subagent-conformance:spec:results",'
        ' "$ref": "urn:subagent-conformance:spec:common#/$defs/area"}',
        encoding="utf-8",
    )
    line = edit("results.yaml", r"(?<=stop_reason: )refusal\b", "refusall")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("results.yaml", line)
    assert problem.message == "'refusall' is not declared in vocabulary results.stop_reason"


def test_schema_pins_a_locked_union(spec_copy: Path, edit: Edit) -> None:
    line = edit("codex.yaml", r"(?<=variant: )cyberPolicy\b", "cyberPolicyy")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("codex.yaml", line)
    assert "'cyberPolicyy'" in problem.message and problem.field.endswith(".variant")


def test_unknown_requirement_reference_is_named(spec_copy: Path, edit: Edit) -> None:
    line = edit("seeds.yaml", r"(?<=requirements: \[)[A-Z]+-\d{3}", "SEL-999")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("seeds.yaml", line)
    assert "SEL-999" in problem.message and ".requirements[0]" in problem.field


def test_duplicate_requirement_id_is_named(spec_copy: Path, edit: Edit) -> None:
    text = (spec_copy / "selection.yaml").read_text(encoding="utf-8")
    second = text.index("- id: SEL-002")
    line = text.count("\n", 0, second) + 1
    edit("selection.yaml", r"- id: SEL-002\b", "- id: SEL-001")
    found = problems(spec_copy)
    assert any(p.file == "selection.yaml" and p.line == line and "SEL-001 is already used" in p.message for p in found)


def test_duplicate_yaml_key_is_named(spec_copy: Path, edit: Edit) -> None:
    line = edit("index.yaml", r"^title: .*$", "title: one\ntitle: two")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("index.yaml", line + 1)
    assert "duplicate key 'title'" in problem.message


def test_yaml_syntax_error_is_located(spec_copy: Path, edit: Edit) -> None:
    line = edit("results.yaml", r"^requirements:$", "requirements: [")
    found = problems(spec_copy)
    assert found[0].file == "results.yaml" and found[0].line >= line and "not valid YAML" in found[0].message


def test_stray_spec_file_is_refused(spec_copy: Path) -> None:
    (spec_copy / "notes.yaml").write_text("a: 1\n", encoding="utf-8")
    [problem] = problems(spec_copy)
    assert problem.file == "notes.yaml" and "does not list" in problem.message


def test_check_spec_command_reports_and_fails(spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--spec", str(spec_copy), "check-spec"]) == 0
    line = edit("diagnostic.yaml", r"(?<=level: )MUST", "must")
    assert main(["--spec", str(spec_copy), "check-spec"]) == 1
    err = capsys.readouterr().err
    assert f"diagnostic.yaml:{line}: requirements[" in err


def test_branches_outside_the_tables_requirements_are_named(spec_copy: Path, edit: Edit) -> None:
    """A table's `branches` narrows its own `requirements` (the reach audit): naming another
    requirement is a mistake, named at the entry."""
    line = edit("adapter-protocol.yaml", r"(?<=      requirements: \[)ADP-008(?=\])", "ADP-009")
    [problem] = problems(spec_copy)
    assert (problem.file, problem.line) == ("adapter-protocol.yaml", line)
    assert problem.field == "tables.operations.branches.requirements[0]"
    assert problem.message == "ADP-009 is not one of the table's requirements"


def test_branches_on_rows_that_name_their_requirements_are_named(spec_copy: Path, edit: Edit) -> None:
    """Where rows name requirements in their cells, the cells say whose branch each row is, and
    a table-wide `branches` would contradict them."""
    edit(
        "adapter-protocol.yaml",
        r"(?<=\n    requirements: \[ADP-012, ADP-015, ADP-017, ADP-018, ADP-019, ADP-020, ADP-021\]\n)",
        "    branches: {requirements: [ADP-012], why: only the output schema check}\n",
    )
    [problem] = problems(spec_copy)
    assert (problem.file, problem.field) == ("adapter-protocol.yaml", "tables.exec_limits.branches")
    assert problem.message == "its rows name requirements in their cells, which say whose branch each row is"
