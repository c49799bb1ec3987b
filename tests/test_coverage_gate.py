"""The requirement coverage gate (conformance/verdict/coverage.py): a whole-suite run fails its
collection naming every requirement no collected test names, with its place in spec/; a partial
run never does; a marker naming an unknown ID fails any run; pytest-xdist reports it once.

The nested sessions run against a copy of the spec with requirements that no test can name.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import conformance
import conformance.plugin
from conformance.cli import main
from conformance.spec import Spec, load_spec
from conformance.spec.resources import spec_dir
from conformance.verdict import coverage
from tests.conftest import RunSuite

Collect = Callable[..., tuple[int, str, set[str]]]

PACKAGE = Path(conformance.__file__).resolve().parent
OWN_TESTS = Path(__file__).resolve().parent
NEW = {  # spec file -> (the ID of a requirement inserted before its first one, extra lines of its entry)
    "selection.yaml": ("SEL-999", ""),
    "adapter-protocol.yaml": ("ADP-999", "    tested_by: project\n"),
}
LISTED = re.compile(r"^  ([A-Z]+-\d{3})  (\S+:\d+) ", re.MULTILINE)


@dataclass(frozen=True)
class Copy:
    root: Path
    spec: Spec
    where: dict[str, str]  # the inserted requirement IDs -> spec/<file>:<line>


@pytest.fixture(scope="module")
def spec_copy(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    """The spec with SEL-999 and ADP-999 (tested by the project's own tests) added, loaded once."""
    root = tmp_path_factory.mktemp("gate") / "spec"
    shutil.copytree(spec_dir(), root)
    where = {}
    for file, (rid, extra) in NEW.items():
        text = (root / file).read_text(encoding="utf-8")
        at = text.index("\n  - id: ", text.index("\nrequirements:\n")) + 1
        entry = (
            f"  - id: {rid}\n    level: MUST\n{extra}    title: A requirement no test names\n"
            "    text: It exists only in a scratch copy of the spec, so no test can name it.\n"
            "    sources:\n      - decision: Added by tests/test_coverage_gate.py.\n"
        )
        (root / file).write_text(text[:at] + entry + text[at:], encoding="utf-8")
        where[rid] = f"spec/{file}:{text.count(chr(10), 0, at) + 1}"
    return Copy(root, load_spec(root), where)


@pytest.fixture
def gate_on(spec_copy: Copy, monkeypatch: pytest.MonkeyPatch) -> Copy:
    """Nested sessions of this test load the spec copy."""
    monkeypatch.setattr(conformance.plugin, "load_spec", lambda: spec_copy.spec)
    return spec_copy


class _Named:
    """The requirement IDs the markers of every collected test name, before any deselection."""

    def __init__(self) -> None:
        self.ids: set[str] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.ids |= {rid for item in items for mark in item.iter_markers("requirement") for rid in mark.args}


@pytest.fixture
def collect(run_suite: RunSuite) -> Collect:
    """A nested collection-only session: its exit code, its output, the IDs its tests name."""

    def run(*args: str) -> tuple[int, str, set[str]]:
        named = _Named()
        done = run_suite("--collect-only", "-q", *args, plugins=[named])
        return done.code, done.out, named.ids

    return run


def listed(output: str) -> dict[str, str]:
    return dict(LISTED.findall(output.split("requirement coverage gate:", 1)[1]))


@pytest.mark.parametrize("with_project", [False, True], ids=["wheel", "checkout"])
def test_a_whole_suite_run_names_every_untested_requirement(
    collect: Collect, gate_on: Copy, with_project: bool
) -> None:
    """Everything not excluded needs a test; a requirement tested by the project's own tests only
    when they are collected too (a wheel has none)."""
    code, output, named = collect(str(PACKAGE), *([str(OWN_TESTS)] if with_project else []))
    assert code == pytest.ExitCode.INTERRUPTED, output
    assert "requirement coverage gate:" in output and "ERROR collecting" in output, output
    found = listed(output)
    expected = {
        req.id
        for req in gate_on.spec.requirements()
        if req.excluded is None and req.id not in named and (with_project or req.tested_by != coverage.PROJECT)
    }
    assert set(found) == expected, output
    assert found["SEL-999"] == gate_on.where["SEL-999"]
    assert ("ADP-999" in found) == with_project


PARTIAL = {
    "a single module": [str(PACKAGE / "test_selection.py")],
    "--pyargs of one module": ["--pyargs", "conformance.test_selection"],
    "-k": [str(PACKAGE), "-k", "golden_vector"],
    "--requirement": [str(PACKAGE), "--requirement=SEL-001"],
    "a single node id": [f"{PACKAGE / 'test_spec.py'}::test_golden_vector_names_are_unique"],
    "a known-bad run": [str(PACKAGE / "test_selection.py"), str(PACKAGE / "test_results.py"), "--requirement=SEL-003"],
}


@pytest.mark.parametrize("args", PARTIAL.values(), ids=list(PARTIAL))
def test_a_partial_run_does_not_trip_the_gate(collect: Collect, gate_on: Copy, args: list[str]) -> None:
    code, output, _ = collect(*args)
    assert code == pytest.ExitCode.OK, output
    assert "requirement coverage gate" not in output


# tests/data/marks_unknown_id.py gives one of the suite's own tests a marker naming an ID the spec
# lacks (a test file of the user's own is not the suite's: its `requirement` marker is never
# checked). It is loaded with -p by its dotted name, importable by xdist workers too.
MARKS_UNKNOWN = ("-p", "tests.data.marks_unknown_id")
MARKED = "::test_golden_vector_names_are_unique: SEL-998"


def test_an_unknown_requirement_id_fails_any_run(run_suite: RunSuite) -> None:
    done = run_suite("--collect-only", "-q", *MARKS_UNKNOWN, "--pyargs", "conformance.test_spec")
    assert done.code == pytest.ExitCode.INTERRUPTED, done.output
    assert "requirement markers name IDs the spec does not define:\n  " in done.out, done.out
    assert MARKED in done.out and ": SEL-001" not in done.out


def test_under_xdist_the_gate_fails_once_and_runs_nothing(run_suite: RunSuite) -> None:
    """Every worker collects and finds the same problem; the controller shows it once, as a
    collection error, and no worker runs a test. (An untested requirement in a whole-suite run
    goes through the same report as the unknown ID used here, which needs no whole suite.)
    The controller runs nested in this process; its two workers are interpreters of their own."""
    done = run_suite("-n", "2", *MARKS_UNKNOWN, "--pyargs", "conformance.test_spec", xdist=True)
    output = done.output
    assert done.code == pytest.ExitCode.TESTS_FAILED, output
    assert "INTERNALERROR" not in output and "crashed" not in output, output
    assert output.count("ERROR collecting test session") == 1, output
    assert MARKED in output, output
    assert re.search(r"\b2 workers \[0 items\]", output) and " passed" not in output, output


def test_the_coverage_command_fails_naming_what_lacks_a_test(
    spec_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--spec", str(spec_copy.root), "coverage"]) == 1
    output = capsys.readouterr().out
    assert re.search(r"^SEL-999  NO TEST$", output, re.MULTILINE), output
    summary = output.split("requirement(s) without a test:\n", 1)[1]
    assert dict(LISTED.findall(summary))["SEL-999"] == spec_copy.where["SEL-999"]
    assert "SEL-001" not in summary


def test_the_gate_demands_by_scope() -> None:
    spec = load_spec()
    every = {req.id for req in spec.requirements() if req.excluded is None}
    project = {req.id for req in spec.requirements() if req.tested_by == coverage.PROJECT}

    def ids(scope: coverage.Scope) -> set[str]:
        return {req.id for req in coverage.untested(spec, {}, scope)}

    assert ids(coverage.Scope(conformance=False, project=False)) == set()
    assert ids(coverage.Scope(conformance=True, project=False)) == every - project
    assert ids(coverage.Scope(conformance=True, project=True)) == every
    assert coverage.untested(spec, {rid: ["a test"] for rid in every}, coverage.Scope(True, True)) == []
