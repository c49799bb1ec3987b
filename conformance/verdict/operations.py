"""Which operations each conformance test module calls, and so which tiers can observe a change.

Each ``conformance/test_<tier>.py`` declares the operations its tests call, as a literal
``OPERATIONS = frozenset({...})``. The declaration is held to the truth on every run: a call
of an operation its module does not declare warns (:class:`UndeclaredOperation`, an error in
the project's own runs, see pyproject.toml), so it cannot go stale. The self-test reads the
declarations to run a known-good variant over exactly the tiers that call an operation the
variant implements differently from the reference: a tier that calls only the reference's own
functions gives the reference's verdict, which the main run already checks.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path

from conformance.spec.resources import PACKAGE

DECLARATION = "OPERATIONS"

# While a conformance test runs: the operations its module declares, and the module's name. A
# context variable, so that a call played ahead (conformance/process/ahead.py) carries its own test's.
RUNNING: ContextVar[tuple[frozenset[str], str] | None] = ContextVar("subagent_conformance_running", default=None)


def declaration(module: object) -> tuple[frozenset[str], str]:
    """What RUNNING holds while a test of ``module`` (an imported test module) runs."""
    return getattr(module, DECLARATION, None) or frozenset(), getattr(module, "__name__", "")


class UndeclaredOperation(UserWarning):
    """A conformance test called an operation its module's OPERATIONS do not list (a suite bug:
    the self-test would run a changed operation's variants over too few tiers)."""


def declared(module: Path) -> frozenset[str] | None:
    """The literal ``OPERATIONS = frozenset({...})`` of a test module, or None without one."""
    tree = ast.parse(module.read_text(encoding="utf-8"), filename=str(module))
    for node in tree.body:
        value: ast.expr | None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == DECLARATION:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "frozenset"):
                raise ValueError(f"{module}: {DECLARATION} must be a literal frozenset({{...}})")
            names = ast.literal_eval(value.args[0]) if value.args else set()
            return frozenset(str(name) for name in names)
    return None


def tiers() -> dict[str, frozenset[str]]:
    """Every conformance tier with the operations its module declares (none: it calls none)."""
    return {
        path.stem.removeprefix("test_"): declared(path) or frozenset() for path in sorted(PACKAGE.glob("test_*.py"))
    }


def exercising(changed: Iterable[str]) -> tuple[str, ...]:
    """The tiers whose tests call at least one of ``changed``."""
    wanted = set(changed)
    return tuple(tier for tier, ops in tiers().items() if ops & wanted)


def changed_operations(module: str, operations: Iterable[str], importable: Iterable[Path] = ()) -> frozenset[str]:
    """The operations that Python adapter ``module`` implements with another function than the
    reference's (one it defines itself; an operation it lacks is not one it changes)."""
    import reference_impl

    saved = list(sys.path)
    sys.path[:0] = [str(p) for p in importable]
    try:
        variant = importlib.import_module(module)
    finally:
        sys.path[:] = saved
    return frozenset(
        op
        for op in operations
        if callable(getattr(variant, op, None)) and getattr(variant, op) is not getattr(reference_impl, op, None)
    )
