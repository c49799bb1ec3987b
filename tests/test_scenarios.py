"""A broken scenario file is rejected as a whole, naming the file, the line and the field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.process.scenarios import load_scenarios, scenario_file
from conformance.spec import Problem, Spec, SpecError, load_spec

SPEC = load_spec()


def broken(tmp_path: Path, pattern: str, replacement: str, product: str = "claude-code") -> tuple[Path, int]:
    """A copy of the shipped scenario file with the first match of ``pattern`` replaced, and its line."""
    text = scenario_file(product).read_text(encoding="utf-8")
    match = re.search(pattern, text, flags=re.MULTILINE)
    assert match, f"{pattern!r} not found in the {product} scenario file"
    target = tmp_path / f"{product}.yaml"
    target.write_text(text[: match.start()] + replacement + text[match.end() :], encoding="utf-8")
    return target, text.count("\n", 0, match.start()) + 1


def problems(spec: Spec, file: Path) -> list[Problem]:
    with pytest.raises(SpecError) as caught:
        load_scenarios(spec, file)
    return caught.value.problems


@pytest.mark.parametrize("product", ["claude-code", "codex"])
def test_the_shipped_scenario_files_load(product: str) -> None:
    assert load_scenarios(SPEC, scenario_file(product))


def test_an_unknown_action_names_its_line_and_field(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"\{exit: 23\}", "{exit_code: 23}")
    [problem] = problems(SPEC, file)
    assert (problem.file, problem.line) == (str(file), line)
    assert re.fullmatch(r"scenarios\[\d+\]\.actions\[\d+\]", problem.field), problem.field
    assert str(problem).startswith(f"{file}:{line}: scenarios[")


def test_a_wrong_value_names_its_field(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"(?<=run: \{cwd: )missing", "absent")
    [problem] = problems(SPEC, file)
    assert (problem.line, problem.field[-8:]) == (line, ".run.cwd")
    assert "'absent' is not one of" in problem.message


def test_a_missing_key_names_the_scenario(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"^    description: A result subtype outside.*\n", "")
    [problem] = problems(SPEC, file)
    assert re.fullmatch(r"scenarios\[\d+\]", problem.field), problem.field
    assert "'description' is a required property" in problem.message
    assert problem.line == line - 2  # the scenario's own line: "- name: ..."


def test_an_unknown_requirement_is_named(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"(?<=covers: \[)CC-009", "CC-999")
    [problem] = problems(SPEC, file)
    assert (problem.line, problem.message) == (line, "unknown requirement CC-999")
    assert re.fullmatch(r"scenarios\[\d+\]\.covers\[0\]", problem.field), problem.field


def test_an_unknown_canary_site_is_named(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"(?<=plants: \[)unknown-subtype", "unknown-subtypes")
    [problem] = problems(SPEC, file)
    assert (problem.line, problem.message) == (line, "unknown canary site 'unknown-subtypes'")
    assert problem.field.endswith(".plants[0]")


def test_a_duplicate_name_is_named(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"(?<=name: )unknown-subtype-never-copied", "api-error-500-is-invalid-success")
    [problem] = problems(SPEC, file)
    assert problem.line == line and problem.field.endswith(".name")
    assert "duplicate scenario name 'api-error-500-is-invalid-success'" in problem.message


def test_an_unquoted_on_key_is_caught(tmp_path: Path) -> None:
    """YAML 1.1 reads a bare ``on`` as true: a responder written that way is named, not ignored."""
    file, line = broken(tmp_path, r'"on"(?=: \{type: control_request)', "on")
    [problem] = problems(SPEC, file)
    assert problem.line == line and "key True is not a string" in problem.message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    file, _ = broken(tmp_path, r"(?<=covers: \[)CC-009", "CC-998")
    text = file.read_text(encoding="utf-8").replace("covers: [CC-004,", "covers: [CC-997,", 1)
    file.write_text(text, encoding="utf-8")
    assert sorted(p.message for p in problems(SPEC, file)) == [
        "unknown requirement CC-997",
        "unknown requirement CC-998",
    ]


def test_not_yaml_names_the_line(tmp_path: Path) -> None:
    file, line = broken(tmp_path, r"^  - name: split-frames-are-reassembled", "  - name: [unclosed")
    [problem] = problems(SPEC, file)
    assert problem.file == str(file) and problem.line >= line
    assert problem.message.startswith("not valid YAML")


@pytest.mark.parametrize(
    ("product", "key", "replacement", "complaint"),
    [
        ("codex", "plain", "99", "rows; there is no row 99"),
        ("codex", "plain", "8", "row 8 has form 'startup-line', not what plain needs"),
        ("claude-code", "row", "0", "row 0 has form 'plain', not what row needs"),
    ],
)
def test_a_startup_rejections_row_must_exist_and_fit(
    tmp_path: Path, product: str, key: str, replacement: str, complaint: str
) -> None:
    """Rows are referenced by index: a missing row or one of the wrong form is named at load time."""
    file, line = broken(tmp_path, rf"(?<=\{{{key}: )\d+", replacement, product)
    [problem] = problems(SPEC, file)
    assert (problem.line, problem.field.rsplit(".", 1)[-1]) == (line, key), problem
    assert problem.field.endswith(f".expect.start.rejected.{key}"), problem.field
    assert problem.message.endswith(complaint), problem.message


def test_an_unawaited_server_request_is_named(tmp_path: Path) -> None:
    """A fake that ends right after a server request loses a reply that comes late: the run's
    reply check would then depend on scheduling (the unsupported-server-request flake)."""
    file, line = broken(tmp_path, r"^ *- \{await: \{id: 7\}, within_ms: 10000\}\n", "", product="codex")
    [problem] = problems(SPEC, file)
    assert problem.line == line - 1 and re.fullmatch(r"scenarios\[\d+\]\.actions\[\d+\]", problem.field)
    assert problem.message.startswith("the server request 7 is not awaited")
