"""The door: loading the implementation under test (``--impl``) and checking what it declares.

An adapter declares what it claims in ``CONFORMANCE`` (or answers ``describe`` over exec);
a declaration that cannot be tested as written is one usage error before the first test.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema

from conformance.harness.adapter import Adapter
from conformance.harness.exec_adapter import ExecAdapter, ExecStartError, ExecTarget, Limits
from conformance.spec import Spec, describe_error, operations_schema


class AdapterUsageError(Exception):
    """The ``--impl`` value does not name a usable adapter; the message says why, and
    ``condition`` names the case (vocabulary adapter-protocol.usage_error)."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


def _schema(spec: Spec, definition: str) -> jsonschema.protocols.Validator:
    return operations_schema(spec.root, definition)


def load_adapter(impl: str, spec: Spec, exec_timeout: float | None = None, validate: bool = False) -> Adapter:
    """Import ``pkg.mod`` or ``pkg.mod:attr``, or start ``exec:COMMAND``, and check its declaration
    and, for a Python target, that every operation its claims require exists. ``exec_timeout``
    (--call-timeout) overrides pure_call_timeout; ``validate`` (--validate-adapter) also checks
    every exec protocol line against its schema."""
    if exec_timeout is not None and not exec_timeout > 0:
        raise AdapterUsageError(
            f"--call-timeout/--exec-timeout={exec_timeout:g}: a call timeout must be a positive number of seconds",
            "malformed-impl",
        )
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
    check_operations(target, declaration, spec, f"--impl={impl}: ")
    timeout = Limits.from_spec(spec, exec_timeout).pure_call_timeout
    return Adapter(impl, declaration, target, spec, home=_home(module), call_timeout=timeout)


def _home(module: ModuleType) -> Path | None:
    """The folder (or file) of the adapter's top-level package: frames there are its own."""
    top = sys.modules.get(module.__name__.partition(".")[0], module)
    file = getattr(top, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    return path.parent if path.name == "__init__.py" else path


def required_operations(declaration: dict[str, Any], spec: Spec) -> list[str]:
    """The operations a valid declaration's claims require (column required_when of table operations)."""
    needed = []
    for row in spec.table("adapter-protocol", "operations").rows:
        for claim, values in row["required_when"].items():
            claimed = declaration.get(claim) or ()
            if (values == "any" and claimed) or any(value in claimed for value in values if values != "any"):
                needed.append(row["operation"])
                break
    return needed


def check_operations(target: Any, declaration: dict[str, Any], spec: Spec, where: str = "") -> None:
    """Raise one ``missing-operation`` usage error naming every required operation the target
    lacks, each with the nearest callable name it does have (ADP-010)."""
    missing = [name for name in required_operations(declaration, spec) if not callable(getattr(target, name, None))]
    if not missing:
        return
    present = [n for n in dir(target) if not n.startswith("_") and callable(getattr(target, n, None))]
    folded = {n.replace("_", "").lower(): n for n in present}
    lines = []
    for name in missing:
        near = difflib.get_close_matches(name.replace("_", "").lower(), list(folded), n=1, cutoff=0.75)
        lines.append(f"  {name}" + (f" (did you mean: {folded[near[0]]}?)" if near else ""))
    raise AdapterUsageError(
        f"{where}CONFORMANCE claims what needs {len(missing)} operation(s) the adapter does not have "
        f"(table operations, column required_when):\n" + "\n".join(lines),
        "missing-operation",
    )


def _load_exec(impl: str, spec: Spec, exec_timeout: float | None, validate: bool) -> Adapter:
    command = impl.removeprefix("exec:").strip()
    if not command:
        raise AdapterUsageError(f"--impl={impl}: exec: needs a command, e.g. exec:node adapter.mjs", "malformed-impl")
    try:
        process = ExecAdapter(command, spec, Limits.from_spec(spec, exec_timeout), validate)
    except ExecStartError as exc:
        raise AdapterUsageError(f"--impl={impl}: {exc}", exc.condition) from None
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
