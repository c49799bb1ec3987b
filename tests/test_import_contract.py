"""The suite's layers are a contract CI enforces (pyproject.toml, ``[tool.importlinter]``).

A layer may import the layers below it, never those above; the suite never imports its entry
point; the reference never imports the suite. These tests prove the contract holds on the tree,
that it fails on an upward import, and that every module of the package stands in a layer (a
module no layer names would be free to import anything).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "import sys, importlinter.cli as c; sys.exit(c.lint_imports_command())"]


def _contracts() -> list[dict[str, object]]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        contracts: list[dict[str, object]] = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    return contracts


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [*LINT, "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "_data")
    for package in ("conformance", "reference_impl"):
        shutil.copytree(ROOT / package, tree / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tree)
    shutil.copy(ROOT / "subagent_conformance_plugin.py", tree)
    return tree


def test_the_tree_keeps_the_contract(tmp_path: Path) -> None:
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("conformance/spec/links.py", "conformance.verdict.blame"),  # the spec model into the verdict
        ("conformance/verdict/reach.py", "conformance.areas.selection.oracle"),  # the verdict into an area
        ("conformance/harness/adapter.py", "conformance.process.ahead"),  # the harness into the process tier
        ("conformance/plugin.py", "subagent_conformance_plugin"),  # the suite into its entry point
        ("reference_impl/selection.py", "conformance.spec"),  # the reference into the suite
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, upward: str) -> None:
    tree = _copy(tmp_path)
    path = tree / module
    path.write_text(path.read_text(encoding="utf-8") + f"\nimport {upward}  # planted\n", encoding="utf-8")
    result = _lint(tree)
    dotted = module.removesuffix(".py").replace("/", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{dotted} -> {upward}" in result.stdout, result.stdout


def test_every_module_of_the_package_stands_in_a_layer() -> None:
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    assert isinstance(layers, list)
    named = {name.strip() for layer in layers for name in str(layer).split("|")}
    package = ROOT / "conformance"
    modules = {
        f"conformance.{path.stem if path.is_file() else path.name}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").is_file()
    }
    assert modules - named == set(), "modules no layer of pyproject.toml names"
    assert named - modules == set(), "layers naming no module"
