"""What a valid declaration claims, as the tests see it: the claimed values of each claim key
(an optional key absent meaning what the spec says), the operations the adapter implements,
and the gate that keeps every call to those.

A call of an operation the adapter does not implement, or a settle_run input of a settlement
path (or a binding) it does not claim, is not applicable: the gate skips the test saying so
before the adapter sees it, so that no status can read ``passed`` from a surface the adapter
does not claim (ADP-009, ADP-025, ADP-026).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.harness.exec_adapter import ExecAdapter, ExecTarget
from conformance.spec import Spec
from conformance.verdict.report import NOT_APPLICABLE

OPERATIONS = "operations"  # the optional key listing the operations an adapter implements (ADP-025)
SETTLEMENTS = "settlements"  # the optional claim of settle_run settlement paths (ADP-026)
_BOUND_INPUTS = ("select_output", "fold_output", "settle_run")  # operations whose input names a binding


def settlement_rows(spec: Spec) -> list[dict[str, Any]]:
    """Table adapter-protocol.settlements: each path's shape, driver and bindings."""
    return list(spec.table("adapter-protocol", "settlements").rows)


def settlement_of(spec: Spec, request: dict[str, Any]) -> str:
    """The settlement path of a settle_run input: the row of table settlements with its shape and driver."""
    [path] = [
        str(row["settlement"])
        for row in settlement_rows(spec)
        if (row["shape"], row["driver"]) == (request["shape"], request["driver"])
    ]
    return path


def claimed(declaration: dict[str, Any], spec: Spec) -> dict[str, list[str]]:
    """Each claim key's claimed values: ``background`` absent claims none, ``settlements`` absent
    claims every path, and a path counts only with a claimed binding it takes (table settlements)."""
    bindings = [str(b) for b in declaration.get("bindings") or ()]
    listed = declaration.get(SETTLEMENTS)
    paths = []
    for row in settlement_rows(spec):
        if (listed is None or row["settlement"] in listed) and set(bindings) & set(row["bindings"]):
            paths.append(str(row["settlement"]))
    return {
        "bindings": bindings,
        "providers": [str(p) for p in declaration.get("providers") or {}],
        "process_drivers": [str(d) for d in declaration.get("process_drivers") or ()],
        "background": [str(m) for m in declaration.get("background") or ()],
        SETTLEMENTS: paths,
    }


def reaches(row: dict[str, Any], claim: str, values: list[str]) -> bool:
    """Whether claiming ``values`` under ``claim`` makes the operation of ``row`` (table operations) required."""
    wanted = row["required_when"].get(claim)
    if wanted is None or not values:
        return False
    return wanted == "any" or any(value in wanted for value in values)


def required_operations(declaration: dict[str, Any], spec: Spec) -> list[str]:
    """The operations a valid declaration's claims require (column required_when of table operations)."""
    claims = claimed(declaration, spec)
    return [
        str(row["operation"])
        for row in spec.table("adapter-protocol", "operations").rows
        if any(reaches(row, claim, claims.get(claim, [])) for claim in row["required_when"])
    ]


def implemented_operations(declaration: dict[str, Any], spec: Spec) -> frozenset[str]:
    """The operations the adapter implements: those ``operations`` lists, else every required one."""
    listed = declaration.get(OPERATIONS)
    if listed is None:
        return frozenset(required_operations(declaration, spec))
    return frozenset(str(op) for op in listed)


@dataclass(frozen=True)
class Claims:
    """A valid declaration's claims, computed once: what the tests ask and the gate checks."""

    values: dict[str, list[str]]
    implemented: frozenset[str]
    paths: tuple[tuple[str, str, str], ...]  # (shape, driver, settlement) of table settlements

    @classmethod
    def of(cls, declaration: dict[str, Any], spec: Spec) -> Claims:
        paths = tuple((str(r["shape"]), str(r["driver"]), str(r["settlement"])) for r in settlement_rows(spec))
        return cls(claimed(declaration, spec), implemented_operations(declaration, spec), paths)

    def claims(self, claim: str, value: str) -> bool:
        """Whether ``value`` is claimed under ``claim`` (a claim key, or ``operations``)."""
        if claim == OPERATIONS:
            return value in self.implemented
        return value in self.values.get(claim, [])

    def unclaimed(self, operation: str, request: Any) -> str | None:
        """Why a call of ``operation`` with ``request`` reaches nothing claimed, or None: an
        operation not implemented, a binding not claimed, a settlement path not claimed."""
        if operation not in self.implemented:
            return f"does not implement operation {operation!r}"
        if not isinstance(request, dict):
            return None
        if operation in _BOUND_INPUTS and "binding" in request and not self.claims("bindings", str(request["binding"])):
            return f"does not claim bindings {request['binding']!r}"
        if operation == "settle_run":
            for shape, driver, path in self.paths:
                taken = (shape, driver) == (request.get("shape"), request.get("driver"))
                if taken and not self.claims(SETTLEMENTS, path):
                    return f"does not claim settlements {path!r}"
        return None


class Gate:
    """Lets through only the calls that reach what the adapter claims; any other call skips its
    test as not applicable, before the adapter sees it."""

    def __init__(self, impl: str, declaration: dict[str, Any], spec: Spec) -> None:
        self.impl = impl
        self.claims = Claims.of(declaration, spec)
        self.operations = frozenset(str(op) for op in spec.vocabulary("adapter-protocol.operation").values)

    def guard(self, name: str, func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``func`` behind the gate: a call that reaches nothing claimed is skipped, not made."""

        def gated(request: Any) -> Any:
            if (reason := self.claims.unclaimed(name, request)) is not None:
                pytest.skip(f"{NOT_APPLICABLE}{self.impl} {reason}")
            return func(request)

        return gated

    def attribute(self, name: str, fetch: Callable[[str], Any]) -> Any:
        """Attribute ``name`` of the target (``fetch``), an operation behind the gate."""
        if name not in self.operations:
            return fetch(name)
        if name not in self.claims.implemented:
            return self.guard(name, _never)
        value = fetch(name)
        return self.guard(name, value) if callable(value) else value


def _never(request: Any) -> Any:  # the gate refuses every call of an operation not implemented
    raise AssertionError("unreachable: the gate refuses this operation")


class GatedTarget:
    """A Python target whose operations are behind the gate; every other attribute is its own."""

    def __init__(self, target: Any, gate: Gate) -> None:
        self._target = target
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._gate.attribute(name, lambda attr: getattr(self._target, attr))


class GatedExecTarget(ExecTarget):
    """An exec adapter's operations behind the gate (still an ExecTarget: called as exec)."""

    def __init__(self, adapter: ExecAdapter, gate: Gate) -> None:
        super().__init__(adapter)
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._gate.attribute(name, super().__getattr__)
