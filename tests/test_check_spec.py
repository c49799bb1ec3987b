"""``check-spec`` checks everything the spec holds, not only its schemas: golden vectors against
the suite's oracles, the bound vectors' byte counts, and the scenario scripts and recordings
cases built on the spec, each problem as file:line: field: message."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.spec.resources import fixtures_dir
from tests.conftest import Edit


def check_spec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main([*args, "check-spec"]) if not args or args[0] == "--spec" else main(["check-spec", *args])
    err = capsys.readouterr().err
    return code, [line.strip() for line in err.splitlines()[1:]]


def spec_args(spec_copy: Path) -> tuple[str, ...]:
    return ("--spec", str(spec_copy))


def test_a_selection_vector_that_contradicts_the_oracle_is_named(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first golden vector selects "step one" (the last non-empty message); claim the first text.
    text = (spec_copy / "selection.yaml").read_text(encoding="utf-8")
    row = text.index("- name: chunk-last-non-empty-message-past-empty-usage-message")
    expected = re.compile(r"^        expected: .*$", re.MULTILINE).search(text, row)
    assert expected
    line = text.count("\n", 0, expected.start()) + 1
    (spec_copy / "selection.yaml").write_text(
        text[: expected.start()] + '        expected: [{"type": "text", "text": "not what the rule selects"}]'
        + text[expected.end() :], encoding="utf-8",
    )  # fmt: skip
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1
    assert len(problems) == 1 and problems[0].startswith(
        f"selection.yaml:{line}: tables.golden_vectors.rows[0].expected: the selection oracle (SelectionOracle) gives"
    ), problems


def test_a_bound_vector_with_a_wrong_byte_count_is_named(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    vector = r"(?<=name: ascii-exactly-4096-unchanged, covers: \[\"DIA-019\"\], input_bytes: )4096"
    line = edit("diagnostic.yaml", vector, "4095")
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1
    field = "tables.bound_vectors.rows[1].input_bytes"
    assert f"diagnostic.yaml:{line}: {field}: is 4095, but the text is 4096 UTF-8 bytes" in problems, problems


def test_a_render_vector_that_contradicts_the_tables_is_named(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    line = edit("results.yaml", r"(?<=Error: subagent run failed\\nDiagnostic: )Claude Code denied", "Codex denied")
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1
    assert [p for p in problems if p.startswith(f"results.yaml:{line}: tables.render_vectors.rows[")], problems
    assert all("expected_rendering gives" in p for p in problems), problems


def test_a_duplicate_requirement_id_names_both_lines(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    first = edit("selection.yaml", r"(?<=  - id: )SEL-001\b", "SEL-001")
    second = edit("selection.yaml", r"(?<=  - id: )SEL-002\b", "SEL-001")
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1
    assert problems[0].startswith(f"selection.yaml:{second}: requirements[") and problems[0].endswith(
        f".id: SEL-001 is already used at selection.yaml:{first}"
    ), problems


def test_a_scenario_script_with_an_unknown_field_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = tmp_path / "fixtures"
    for folder in ("scenarios", "recordings"):
        shutil.copytree(fixtures_dir() / folder, fixtures / folder)
    script = fixtures / "scenarios" / "codex.yaml"
    text = script.read_text(encoding="utf-8")
    at = text.index("  - name: completed-answer\n")
    unknown = "  - name: completed-answer\n    sleep_first: 3\n"
    script.write_text(text[:at] + unknown + text[at + 27 :], encoding="utf-8")
    line = text.count("\n", 0, at) + 1
    code, problems = check_spec(capsys, "--fixtures", str(fixtures))
    assert code == 1
    assert len(problems) == 1 and problems[0].startswith(f"{script}:{line}: scenarios[0]: "), problems
    assert "'sleep_first' was unexpected" in problems[0], problems


def test_the_shipped_spec_and_fixtures_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-spec"]) == 0
    assert "golden vectors agree with the oracles" in capsys.readouterr().out


def test_a_vector_a_version_adds_is_checked_at_that_version_on_its_own_line(
    spec_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row a later product range adds (here codex 0.151.0's outcome vector) is checked against
    the contract at that version, and its problem is placed on the line of its version entry."""
    text = (spec_copy / "codex.yaml").read_text(encoding="utf-8")
    row = text.index("- name: added-variant-is-kept")
    good = "category: rateLimitExceeded)"
    at = text.index(good, row)
    line = text.count("\n", 0, at) + 1
    (spec_copy / "codex.yaml").write_text(
        text[:at] + "category: rateLimitExceeded; secret: SECRET_TOKEN)" + text[at + len(good) :], encoding="utf-8"
    )
    code, lines = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1, lines
    wanted = f"codex.yaml:{line}: versions[2].rows.outcome_vectors[0].expected"  # the range 0.151.0–0.157.1
    assert any(entry.startswith(wanted) and "run-result grammar" in entry for entry in lines), lines


def test_a_shipped_entry_holding_a_draft_placeholder_is_refused(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    # A draft's decisions are placeholders until a person takes them; one left in a shipped entry
    # (a value, or a mapping key such as the draft's wire key) fails check-spec on its own line.
    line = edit("codex.yaml", r"^        decision: >-\n(?:          .*\n)+", "        decision: 'TODO: decide it'\n")
    wire = edit(  # after the decision's edit, which is above it and shortens the file
        "codex.yaml", r"^      failures:$", "      'TODO: key: what 0.171.0 does differently': null\n      failures:"
    )
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1
    said = "is a placeholder the upgrade gate's draft left"
    assert f"codex.yaml:{line}: versions[1].decisions[0].decision: {said}" in "\n".join(problems), problems
    assert f"codex.yaml:{wire}: versions[3].wire.TODO: key: what 0.171.0 does differently: {said}" in "\n".join(
        problems
    ), problems


def _line_of(spec_copy: Path, file: str, needle: str) -> int:
    text = (spec_copy / file).read_text(encoding="utf-8")
    return text.count("\n", 0, text.index(needle)) + 1


@pytest.mark.parametrize(
    ("pattern", "replacement", "wanted"),
    [
        # a release listed twice, the second time out of order: both named on its entry's line
        (
            r'^    releases: \["0\.158\.0"\]$',
            '    releases: ["0.158.0", "0.157.1"]',
            [
                "versions[3].releases[1]: 0.157.1 is not after 0.158.0",
                "versions[3].releases[1]: 0.157.1 is already covered by the entry 0.151.0",
            ],
        ),
        # a range that runs into the next one: the later entry overlaps it
        (
            r'^    releases: \["0\.158\.0"\]$',
            '    releases: ["0.158.0", "0.159.0"]',
            ["versions[4].version: 0.159.0 overlaps or precedes the range before it, which ends at 0.159.0"],
        ),
        # a release npm lists that no range covers: a gap, on the line of npm's list
        (
            r'^    releases: \["0\.166\.0", "0\.167\.2", "0\.168\.0"\]$',
            '    releases: ["0.166.0", "0.168.0"]',
            ["product.releases.versions[37]: 0.167.2 is in npm's list but no versions entry covers it"],
        ),
        # an entry named by another release than its first
        (
            r'^  - version: "0\.165\.0"$',
            '  - version: "0.165.1"',
            ["versions[6].releases: starts with 0.165.0, not the entry's version 0.165.1"],
        ),
    ],
    ids=["twice-and-unsorted", "overlap", "gap", "misnamed"],
)
def test_a_bad_range_is_named_at_its_file_line_and_field(
    spec_copy: Path, edit: Edit, capsys: pytest.CaptureFixture[str], pattern: str, replacement: str, wanted: list[str]
) -> None:
    """The ranges of `versions` partition npm's list (product.releases): check-spec names a release
    listed twice, an unsorted list, an overlap, a gap and a misnamed entry, each at file:line: field."""
    line = edit("codex.yaml", pattern, replacement)
    code, problems = check_spec(capsys, *spec_args(spec_copy))
    assert code == 1, problems
    said = "\n".join(problems)
    for want in wanted:
        field = want.split(":")[0]
        at = (
            _line_of(spec_copy, "codex.yaml", '"0.167.2", "0.168.0", "0.169.0"')
            if "product.releases" in field
            else line
        )
        if field.endswith(".version"):
            at = _line_of(spec_copy, "codex.yaml", '  - version: "0.159.0"')
        if field.endswith("].releases"):
            at = line + 1  # the releases line below the misnamed version
        assert f"codex.yaml:{at}: {want}" in said, problems
