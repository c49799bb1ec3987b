"""Loading the implementation under test (``--impl``) and calling its operations.

An adapter declares what it claims in ``CONFORMANCE``; every operation takes and
returns JSON-shaped values, and every response is validated against the operation's
schema in ``spec/schema/operations.json`` before a test looks at it.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import jsonschema

from conformance import validation
from conformance.exec_adapter import ExecAdapter, ExecFailure, ExecStartError, ExecTarget, Limits
from conformance.spec import Spec, describe_error, operations_schema


class AdapterUsageError(Exception):
    """The ``--impl`` value does not name a usable adapter; the message says why, and
    ``condition`` names the case (vocabulary adapter-protocol.usage_error)."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


class AdapterResponseError(AssertionError):
    """The adapter answered with a value its operation's schema does not allow (ADP-012)."""

    requirements = ("ADP-012",)


class MissingOperation(AssertionError):
    """The adapter claims an area but lacks an operation that area needs (ADP-010)."""

    requirements = ("ADP-010",)


class OperationError(AssertionError):
    """An operation raised: always the adapter's own failure, never an expected outcome (ADP-013)."""

    requirements = ("ADP-013",)


def _schema(spec: Spec, definition: str) -> jsonschema.protocols.Validator:
    return operations_schema(spec.root, definition)


@dataclass(repr=False)
class Adapter:
    """A loaded adapter: its declaration, and a validated way to call it."""

    def __repr__(self) -> str:  # a fixture's repr opens every traceback: one line
        return f"Adapter({self.impl!r})"

    impl: str
    declaration: dict[str, Any]
    target: Any
    spec: Spec
    close: Callable[[], None] | None = None

    def claims(self, claim: str, value: str) -> bool:
        claimed = self.declaration.get(claim, ())
        return value in claimed

    def operation(self, name: str) -> Callable[[Any], Any]:
        func = getattr(self.target, name, None)
        if not callable(func):
            raise MissingOperation(
                f"adapter {self.impl} claims what needs operation {name!r}, but has no callable of that name"
            )
        return func  # type: ignore[no-any-return]

    def call(self, name: str, payload: Any) -> Any:
        """Call operation ``name``; the answer is returned only once it fits the schema. A failure
        of the adapter layer carries the operation and its input, for the failure's explanation."""
        try:
            return self._call(name, payload)
        except (AdapterResponseError, MissingOperation, OperationError, ExecFailure) as exc:
            exc.operation, exc.input = name, payload  # type: ignore[union-attr]
            raise

    def _call(self, name: str, payload: Any) -> Any:
        if problem := validation.first_problem(self.spec.root, f"{name}_input", payload):
            raise AssertionError(f"the suite built an invalid {name} input: {problem}")  # a suite bug
        func = self.operation(name)
        try:
            answer = func(copy.deepcopy(payload))
        except ExecFailure:
            raise  # it names the operation and what the adapter process did
        except Exception as exc:  # the adapter's traceback would bury the operation's name: keep its last frame
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{frame.filename}:{frame.lineno} in {frame.name}"
            raise OperationError(f"{name} raised {type(exc).__name__}: {exc} (at {where})") from None
        try:
            answer = json.loads(json.dumps(answer))
        except (TypeError, ValueError) as exc:
            raise AdapterResponseError(f"{name} returned a value that is not JSON-shaped: {exc}") from None
        if problem := validation.first_problem(self.spec.root, f"{name}_output", answer):
            raise AdapterResponseError(f"{name} returned an invalid response: {problem}")
        return answer


def load_adapter(impl: str, spec: Spec, exec_timeout: float | None = None, validate: bool = False) -> Adapter:
    """Import ``pkg.mod`` or ``pkg.mod:attr``, or start ``exec:COMMAND``, and check its declaration.
    ``validate`` (--validate-adapter) also checks every exec protocol line against its schema."""
    if impl.startswith("exec:"):
        return _load_exec(impl, spec, exec_timeout, validate)
    module_name, _, attr = impl.partition(":")
    if not module_name or not all(part.isidentifier() for part in module_name.split(".")):
        raise AdapterUsageError(
            f"--impl={impl}: expected a module path such as pkg.mod or pkg.mod:attr", "malformed-impl"
        )
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # an adapter beside the invocation imports as with `python -m pytest`
    try:
        module: ModuleType = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise AdapterUsageError(
            f"--impl={impl}: cannot import module {module_name!r} ({exc})", "module-not-found"
        ) from None
    target: Any = module
    if attr:
        if not hasattr(module, attr):
            raise AdapterUsageError(
                f"--impl={impl}: module {module_name!r} has no attribute {attr!r}", "attribute-not-found"
            )
        target = getattr(module, attr)
    declaration = getattr(target, "CONFORMANCE", None)
    if declaration is None:
        raise AdapterUsageError(
            f"--impl={impl}: no CONFORMANCE declaration; an adapter must say what it claims "
            '(e.g. CONFORMANCE = {"protocol": "1", "bindings": ["chunk-events"], ...})',
            "no-declaration",
        )
    check_declaration(declaration, spec, f"--impl={impl}: ")
    return Adapter(impl, declaration, target, spec)


def _load_exec(impl: str, spec: Spec, exec_timeout: float | None, validate: bool) -> Adapter:
    command = impl.removeprefix("exec:").strip()
    if not command:
        raise AdapterUsageError(f"--impl={impl}: exec: needs a command, e.g. exec:node adapter.mjs", "malformed-impl")
    process = ExecAdapter(command, spec, Limits.from_spec(spec, exec_timeout), validate)
    try:
        declaration = process.describe()
        check_declaration(declaration, spec, f"--impl={impl}: ")
    except ExecStartError as exc:
        process.close()
        raise AdapterUsageError(f"--impl={impl}: {exc}", exc.condition) from None
    except AdapterUsageError:
        process.close()
        raise
    return Adapter(impl, declaration, ExecTarget(process), spec, process.close)


def check_declaration(declaration: Any, spec: Spec, where: str = "") -> None:
    """Raise :class:`AdapterUsageError` for the first usage-error condition that applies,
    in the order of vocabulary adapter-protocol.usage_error."""
    if isinstance(declaration, dict):
        protocols = spec.vocabulary("adapter-protocol.protocol_version").values
        protocol = declaration.get("protocol")
        if isinstance(protocol, bool) or protocol not in protocols:
            raise AdapterUsageError(
                f"{where}CONFORMANCE declares protocol {protocol!r}; "
                f"this suite speaks {', '.join(map(repr, protocols))}",
                "unknown-protocol-version",
            )
        known = spec.vocabulary("selection.binding").values
        bindings = declaration.get("bindings")
        for binding in bindings if isinstance(bindings, list) else ():
            if binding not in known:
                raise AdapterUsageError(
                    f"{where}CONFORMANCE claims unknown binding {binding!r}; known: {', '.join(map(str, known))}",
                    "unknown-binding",
                )
        providers = declaration.get("providers")
        known = spec.vocabulary("adapter-protocol.provider").values
        for provider in providers if isinstance(providers, dict) else ():
            if provider not in known:
                raise AdapterUsageError(
                    f"{where}CONFORMANCE claims unknown provider {provider!r}; known: {', '.join(map(str, known))}",
                    "unknown-provider",
                )
    elif declaration is not None and not isinstance(declaration, dict):
        raise AdapterUsageError(
            f"{where}CONFORMANCE is malformed: it must be a dict, not {type(declaration).__name__}",
            "malformed-declaration",
        )
    for error in _schema(spec, "declaration").iter_errors(declaration):
        raise AdapterUsageError(f"{where}CONFORMANCE is malformed: {describe_error(error)}", "malformed-declaration")
    for provider, version in declaration["providers"].items():
        locked = (spec.areas[provider].locked or {}).get("version")
        if version != locked:
            raise AdapterUsageError(
                f"{where}CONFORMANCE claims provider {provider} at {version}, but this spec is locked to "
                f"{locked}; run the upgrade gate before claiming another version",
                "unlocked-provider-version",
            )
    for driver in declaration["process_drivers"]:
        if driver not in declaration["providers"]:
            raise AdapterUsageError(
                f"{where}CONFORMANCE claims process driver {driver!r} without its provider", "driver-without-provider"
            )
