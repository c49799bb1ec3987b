"""Each conformance module declares the operations its tests call (conformance/verdict/operations.py):
the declarations are literal, held to the truth by the adapter, and decide which tiers a
known-good variant runs over."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from conformance.harness.declaration import load_adapter
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict import operations
from conformance.verdict.operations import UndeclaredOperation


def test_every_conformance_module_declares_its_operations_as_a_literal() -> None:
    modules = sorted(operations.PACKAGE.glob("test_*.py"))
    assert modules
    missing = [m.name for m in modules if operations.declared(m) is None]
    assert not missing, f"conformance modules without a literal OPERATIONS = frozenset({{...}}): {missing}"
    every = {row["operation"] for row in load_spec().table("adapter-protocol", "operations").rows}
    unknown = {tier: sorted(ops - every) for tier, ops in operations.tiers().items() if ops - every}
    assert not unknown, f"declared operations the spec does not define: {unknown}"


def test_every_operation_a_module_names_is_declared() -> None:
    """The static half of the check: a call made only while diagnosing a failure (the results
    tier asks the adapter's own fold which output it selected) is never reached by the
    reference, so the adapter's warning alone would not see it."""
    every = {row["operation"] for row in load_spec().table("adapter-protocol", "operations").rows}
    undeclared = {}
    for module in sorted(operations.PACKAGE.glob("test_*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        body = [n for n in tree.body if not _declares(n)]
        named = {n.value for top in body for n in ast.walk(top) if isinstance(n, ast.Constant) and n.value in every}
        if missing := named - (operations.declared(module) or frozenset()):
            undeclared[module.name] = sorted(missing)
    assert not undeclared, f"operations named in a conformance module but not in its OPERATIONS: {undeclared}"


def _declares(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == operations.DECLARATION for t in targets)


def test_a_declaration_that_is_not_a_literal_is_refused(tmp_path: Path) -> None:
    module = tmp_path / "test_x.py"
    module.write_text("OPERATIONS = set(['fold_output'])\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must be a literal frozenset"):
        operations.declared(module)


def test_a_call_its_module_does_not_declare_warns() -> None:
    adapter = load_adapter("reference_impl", load_spec())
    adapter.declared = (frozenset({"fold_output"}), "conformance.test_example")
    request = {"binding": "chunk-events", "events": []}
    with pytest.warns(UndeclaredOperation, match=r"conformance.test_example calls operation 'select_output'"):
        adapter.call("select_output", request)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        adapter.call("fold_output", {"binding": "chunk-events", "steps": []})  # declared: no warning
        adapter.declared = None
        adapter.call("select_output", request)  # outside a conformance test: not checked


def test_a_variant_runs_over_the_tiers_that_call_what_it_changes() -> None:
    every = frozenset().union(*operations.tiers().values())
    importable = [fixtures_dir() / "known_good"]
    changed = operations.changed_operations("good_cdx_formatter_prints_any_status", every, importable)
    assert changed == {"format_diagnostic"}  # the rest is the reference's own functions
    tiers = operations.exercising(changed)
    assert "diagnostic" in tiers and "codex" not in tiers  # no Codex-tier test calls format_diagnostic
    assert operations.changed_operations("reference_impl", every) == frozenset()
