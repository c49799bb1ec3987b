"""``subagent-conformance init``: the starter a harness begins from. The TypeScript one, its stubs
filled with the Node.js example's logic, passes the selection tier over exec; left as written,
each of its stubs and the Python skeleton's fails as "not implemented", never a crash; init
overwrites nothing; its known-gaps.yaml is a valid --expected-failures file; its types are those of
the schema (the drift gate is `subagent-conformance docs --check`, tests/test_docs.py) and its
constraints pin every dependency within the ranges the suite declares."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from conformance.cli import main
from conformance.docs.typescript import OPERATIONS_ID, STARTER_TYPES, type_name
from conformance.spec import load_spec
from conformance.starter import CONSTRAINTS, operations
from conformance.verdict.expected_failures import load_entries
from tests.conftest import RunSuite

ROOT = Path(__file__).resolve().parents[1]
NODE_EXAMPLE = ROOT / "fixtures" / "adapters" / "node" / "adapter.mjs"
_STUB = re.compile(r'throw new NotImplemented\("(\w+)"\);')


def _init(lang: str, target: Path) -> Path:
    assert main(["init", "--lang", lang, str(target)]) == 0
    return target


def _not_implemented(run_failed: list[dict[str, object]]) -> set[str]:
    """The operations the failures name as not implemented; every failure must be one."""
    named = set()
    for test in run_failed:
        found = re.search(r"(\w+) is not implemented yet", str(test.get("message", "")))
        assert found, f"{test['nodeid']} failed otherwise: {test.get('message')}"
        named.add(found.group(1))
    return named


def test_the_typescript_starter_filled_with_a_correct_harness_passes(tmp_path: Path, run_suite: RunSuite) -> None:
    folder = _init("typescript", tmp_path / "harness")
    adapter = folder / "adapter.mjs"
    text = adapter.read_text(encoding="utf-8")
    example = {"select_output", "fold_output", "settle_run", "render_tool_result", "bound_diagnostic"}
    assert example <= set(_STUB.findall(text)), "a stub for every operation the example implements"
    filled = _STUB.sub(
        lambda m: f'return EXAMPLE.get("{m.group(1)}")(input);' if m.group(1) in example else m.group(0), text
    )
    reuse = f"import {{ OPERATIONS as EXAMPLE }} from {json.dumps(NODE_EXAMPLE.as_uri())};\n"
    filled = filled.replace('import process from "node:process";\n', 'import process from "node:process";\n' + reuse)
    adapter.write_text(filled, encoding="utf-8")
    done = run_suite("-q", "--pyargs", "conformance.test_selection", impl=f"exec:node {adapter}", report=True)
    assert done.code == 0, done.tail
    assert done.report["run"]["verdict"] == "conforms"


def test_the_typescript_starter_as_written_fails_as_not_implemented(tmp_path: Path, run_suite: RunSuite) -> None:
    adapter = _init("typescript", tmp_path / "harness") / "adapter.mjs"
    done = run_suite("-q", "--pyargs", "conformance.test_selection", "--requirement=SEL-008",
                     impl=f"exec:node {adapter}", report=True)  # fmt: skip
    assert done.code == 1 and done.report["run"]["verdict"] == "violated", done.tail
    assert _not_implemented(done.failed()) <= {op.name for op in operations(load_spec())}
    assert _not_implemented(done.failed()), "the failures name the operations"


def test_the_python_skeleton_imports_and_fails_as_not_implemented(tmp_path: Path, run_suite: RunSuite) -> None:
    folder = _init("python", tmp_path / "harness")
    done = run_suite("-q", "--pyargs", "conformance.test_selection", "conformance.test_results",
                     "--requirement=SEL-008,RES-001", impl="adapter", importable=[folder], report=True)  # fmt: skip
    assert done.code == 1 and done.report["run"]["verdict"] == "violated", done.tail
    assert "INTERNALERROR" not in done.output
    named = _not_implemented(done.failed())
    assert {"fold_output", "settle_run"} <= named, named


def test_init_overwrites_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "harness"
    folder.mkdir()
    (folder / "known-gaps.yaml").write_text("mine\n", encoding="utf-8")
    assert main(["init", "--lang", "python", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "already has known-gaps.yaml" in err and "overwrites nothing" in err, err
    assert [p.name for p in folder.iterdir()] == ["known-gaps.yaml"], "nothing written"
    assert (folder / "known-gaps.yaml").read_text(encoding="utf-8") == "mine\n"


def test_the_known_gaps_file_is_valid_and_its_entry_would_be(tmp_path: Path) -> None:
    gaps = _init("python", tmp_path / "harness") / "known-gaps.yaml"
    spec = load_spec()
    assert load_entries(gaps, spec.root) == []
    text = gaps.read_text(encoding="utf-8")
    commented = "expected_failures:\n" + "".join(
        line.removeprefix("#") + "\n" for line in text.splitlines() if line.startswith("#  ")
    )
    (tmp_path / "uncommented.yaml").write_text(commented, encoding="utf-8")
    [entry] = load_entries(tmp_path / "uncommented.yaml", spec.root)
    assert entry.requirement == "SEL-008" and entry.reason


def test_the_workflow_uses_the_action_with_the_starter_files(tmp_path: Path) -> None:
    workflow = _init("typescript", tmp_path / "harness") / ".github" / "workflows" / "conformance.yml"
    text = workflow.read_text(encoding="utf-8")
    assert 'impl: "exec:node adapter.mjs"' in text and "expected-failures: known-gaps.yaml" in text
    assert re.search(r"uses: [\w.-]+/[\w.-]+@v\d+\.\d+\.\d+", text), text


def test_the_types_name_every_definition_and_operation() -> None:
    schema = json.loads((ROOT / "spec" / "schema" / "operations.json").read_text(encoding="utf-8"))
    types = (ROOT / "docs" / STARTER_TYPES).read_text(encoding="utf-8")
    for name in schema["$defs"]:
        assert f"export type {type_name(OPERATIONS_ID, name)} = " in types, name
    interface = types.partition("export interface Operations {")[2]
    for op in operations(load_spec()):
        assert f"  {op.name}(input: " in interface, op.name


def test_the_constraints_pin_every_dependency_within_its_range() -> None:
    """constraints.txt (recorded by `python -m conformance.starter` after a green CI run) names a
    version for each runtime dependency pyproject.toml declares, inside the declared range."""
    pinned = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[name] = version
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    for text in declared:
        requirement = Requirement(text)
        key = requirement.name.lower().replace("_", "-")
        assert key in pinned, f"constraints.txt pins no {requirement.name}"
        assert requirement.specifier.contains(pinned[key], prereleases=True), f"{key}=={pinned[key]} not {requirement}"
