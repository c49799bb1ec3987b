"""The door: loading the implementation under test (``--impl``) and checking what it declares.

An adapter declares what it claims in ``CONFORMANCE`` (or answers ``describe`` over exec);
a declaration that cannot be tested as written is one usage error before the first test.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema

from conformance.harness.adapter import Adapter
from conformance.harness.claims import (
    OPERATIONS,
    SETTLEMENTS,
    Gate,
    GatedExecTarget,
    GatedTarget,
    claimed,
    implemented_operations,
    reaches,
    required_operations,
)
from conformance.harness.exec_adapter import ExecAdapter, ExecStartError
from conformance.harness.exec_texts import Limits
from conformance.spec import Spec, describe_error, operations_schema
from conformance.spec.releases import covered

__all__ = ["AdapterUsageError", "check_declaration", "check_operations", "load_adapter", "required_operations"]


class AdapterUsageError(Exception):
    """The ``--impl`` value does not name a usable adapter; the message says why, and
    ``condition`` names the case (vocabulary adapter-protocol.usage_error)."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


def _schema(spec: Spec, definition: str) -> jsonschema.protocols.Validator:
    return operations_schema(spec.root, definition)


def load_adapter(
    impl: str,
    spec: Spec,
    exec_timeout: float | None = None,
    validate: bool = False,
    verified: Mapping[str, Mapping[str, Any]] | None = None,
) -> Adapter:
    """Import ``pkg.mod`` or ``pkg.mod:attr``, or start ``exec:COMMAND``, and check its declaration
    and, for a Python target, that every operation its claims require exists. ``exec_timeout``
    (--call-timeout) overrides pure_call_timeout; ``validate`` (--validate-adapter) also checks
    every exec protocol line against its schema; ``verified`` ({product: {release: ...}}, from
    --product-versions) the releases a claim may name beyond those the spec covers."""
    if exec_timeout is not None and not exec_timeout > 0:
        raise AdapterUsageError(
            f"--call-timeout/--exec-timeout={exec_timeout:g}: a call timeout must be a positive number of seconds",
            "malformed-impl",
        )
    if impl.startswith("exec:"):
        return _load_exec(impl, spec, exec_timeout, validate, verified)
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
    check_declaration(declaration, spec, f"--impl={impl}: ", verified=verified)
    check_operations(target, declaration, spec, f"--impl={impl}: ")
    timeout = Limits.from_spec(spec, exec_timeout).pure_call_timeout
    gated = GatedTarget(target, Gate(impl, declaration, spec))
    return Adapter(impl, declaration, gated, spec, home=_home(module), call_timeout=timeout)


def _home(module: ModuleType) -> Path | None:
    """The folder (or file) of the adapter's top-level package: frames there are its own."""
    top = sys.modules.get(module.__name__.partition(".")[0], module)
    file = getattr(top, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    return path.parent if path.name == "__init__.py" else path


def check_operations(target: Any, declaration: dict[str, Any], spec: Spec, where: str = "") -> None:
    """Raise one ``missing-operation`` usage error naming every operation the target implements
    (those ``operations`` lists, else every required one) but lacks, each with the nearest callable
    name it does have (ADP-010, ADP-025)."""
    implemented = implemented_operations(declaration, spec)
    missing = [
        str(row["operation"])
        for row in spec.table("adapter-protocol", "operations").rows
        if row["operation"] in implemented and not callable(getattr(target, row["operation"], None))
    ]
    if not missing:
        return
    present = [n for n in dir(target) if not n.startswith("_") and callable(getattr(target, n, None))]
    folded = {n.replace("_", "").lower(): n for n in present}
    lines = []
    for name in missing:
        near = difflib.get_close_matches(name.replace("_", "").lower(), list(folded), n=1, cutoff=0.75)
        lines.append(f"  {name}" + (f" (did you mean: {folded[near[0]]}?)" if near else ""))
    source = (
        "its operations list"
        if declaration.get(OPERATIONS) is not None
        else "its claims (table operations, column required_when; list the operations it has in `operations`)"
    )
    raise AdapterUsageError(
        f"{where}CONFORMANCE claims what needs {len(missing)} operation(s) the adapter does not have, "
        f"required by {source}:\n" + "\n".join(lines),
        "missing-operation",
    )


def _load_exec(
    impl: str, spec: Spec, exec_timeout: float | None, validate: bool, verified: Mapping[str, Mapping[str, Any]] | None
) -> Adapter:
    command = impl.removeprefix("exec:").strip()
    if not command:
        raise AdapterUsageError(f"--impl={impl}: exec: needs a command, e.g. exec:node adapter.mjs", "malformed-impl")
    try:
        process = ExecAdapter(command, spec, Limits.from_spec(spec, exec_timeout), validate)
    except ExecStartError as exc:
        raise AdapterUsageError(f"--impl={impl}: {exc}", exc.condition) from None
    try:
        declaration = process.describe()
        check_declaration(declaration, spec, f"--impl={impl}: ", "the describe answer", verified)
    except ExecStartError as exc:
        process.close()
        raise AdapterUsageError(f"--impl={impl}: {exc}", exc.condition) from None
    except AdapterUsageError:
        process.close()
        raise
    except BaseException:  # SIGTERM (Terminated) or Ctrl-C while it starts: no session will close it
        process.close(0.0)
        raise
    target = GatedExecTarget(process, Gate(impl, declaration, spec))
    return Adapter(impl, declaration, target, spec, process.close, exec_process=process)


def check_declaration(
    declaration: Any,
    spec: Spec,
    where: str = "",
    name: str = "CONFORMANCE",
    verified: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Raise :class:`AdapterUsageError` for the first usage-error condition that applies, in the
    order of vocabulary adapter-protocol.usage_error; the message says what was expected and what
    ``name`` (the declaration's source) holds instead. A provider release the spec does not cover
    is accepted when ``verified`` (--product-versions) has it."""
    at = f"{where}{name}"
    if isinstance(declaration, dict):
        _check_known_values(declaration, spec, at)
    else:
        raise AdapterUsageError(
            f"{at} is malformed: it must be an object (a Python dict) of claims, not {_kind(declaration)}",
            "malformed-declaration",
        )
    for error in _schema(spec, "declaration").iter_errors(declaration):
        raise AdapterUsageError(f"{at} is malformed: {_schema_message(error, declaration)}", "malformed-declaration")
    for provider, version in declaration["providers"].items():
        area = spec.areas[provider]
        if not covered(area, version) and version not in (verified or {}).get(provider, {}):
            file = f"{provider}-{version}.versions.json"
            raise AdapterUsageError(
                f"{at} claims provider {provider} at {version}, but this spec covers {provider} {area.ranges} "
                f"only (every release each range lists: spec/{provider}.yaml versions). Claim a covered release, "
                f"or, to test {version} before the suite covers it, run `subagent-conformance upgrade-check --product "
                f"{provider} --version {version} --write-versions {file}` (it verifies that nothing the contract "
                f"reads changed against a covered neighbour), then rerun with `--product-versions={file}`",
                "unshipped-provider-version",
            )
    for driver in declaration["process_drivers"]:
        if driver not in declaration["providers"]:
            base = spec.areas[driver].shipped[0]
            raise AdapterUsageError(
                f"{at} claims process driver {driver!r} without its provider: every process_drivers entry "
                f"must also be a key of providers (add {driver!r}: {base!r} to providers, or drop the driver)",
                "driver-without-provider",
            )
    _check_operations_list(declaration, spec, at)
    _check_idle_claims(declaration, spec, at)


def _check_known_values(declaration: dict[str, Any], spec: Spec, at: str) -> None:
    """unknown-protocol-version, unknown-binding, unknown-provider: each says what it must be."""
    protocols = [str(p) for p in spec.vocabulary("adapter-protocol.protocol_version").values]
    protocol = declaration.get("protocol")
    if isinstance(protocol, bool) or protocol not in protocols:
        expected = " or ".join(f'"{p}"' for p in protocols)
        found = "it has none" if "protocol" not in declaration else f"not {_kind(protocol)}"
        raise AdapterUsageError(
            f"{at}: protocol must be the string {expected} (the adapter protocol version this suite speaks), {found}",
            "unknown-protocol-version",
        )
    for key, vocabulary, condition, what in (
        ("bindings", "selection.binding", "unknown-binding", "binding"),
        ("providers", "adapter-protocol.provider", "unknown-provider", "provider"),
    ):
        known = [str(v) for v in spec.vocabulary(vocabulary).values]
        values = declaration.get(key)
        for value in values if isinstance(values, list | dict) else ():
            if value not in known:
                near = difflib.get_close_matches(str(value), known, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise AdapterUsageError(
                    f"{at} claims unknown {what} {value!r}{hint}: every {key} "
                    f"{'key' if key == 'providers' else 'entry'} must be one of {', '.join(known)}",
                    condition,
                )


def _check_operations_list(declaration: dict[str, Any], spec: Spec, at: str) -> None:
    """unreached-operation: a listed operation that no claim requires (ADP-025)."""
    listed = declaration.get(OPERATIONS)
    if listed is None:
        return
    required = required_operations(declaration, spec)
    rows = {row["operation"]: row for row in spec.table("adapter-protocol", "operations").rows}
    for operation in listed:
        if operation not in required:
            when = rows[operation]["required_when"]
            needs = " or ".join(_requirement(claim, values) for claim, values in when.items())
            raise AdapterUsageError(
                f"{at} lists operation {operation!r} in operations, but none of its claims requires it: "
                f"{operation} is required by {needs} (table operations, column required_when); "
                "claim what it serves, or drop it from operations",
                "unreached-operation",
            )


def _check_idle_claims(declaration: dict[str, Any], spec: Spec, at: str) -> None:
    """idle-claim: a claimed value that reaches no operation the adapter implements (ADP-025, ADP-026)."""
    implemented = implemented_operations(declaration, spec)
    effective = claimed(declaration, spec)
    rows = spec.table("adapter-protocol", "operations").rows
    declared: dict[str, list[str]] = {
        "bindings": list(declaration["bindings"]),
        "providers": list(declaration["providers"]),
        "process_drivers": list(declaration["process_drivers"]),
        "background": list(declaration.get("background") or ()),
        SETTLEMENTS: list(declaration.get(SETTLEMENTS) or ()),
    }
    for claim, values in declared.items():
        for value in values:
            if claim == SETTLEMENTS and value not in effective[SETTLEMENTS]:
                [row] = [r for r in spec.table("adapter-protocol", "settlements").rows if r["settlement"] == value]
                raise AdapterUsageError(
                    f"{at} claims settlements {value!r}, but no claimed binding settles on that path: "
                    f"{value} takes {', '.join(row['bindings'])} (table settlements), and bindings is "
                    f"{declaration['bindings']}; claim one of them, or drop the path",
                    "idle-claim",
                )
            reached = [str(r["operation"]) for r in rows if reaches(r, claim, [value])]
            if claim == "bindings":  # a binding also reaches settle_run through the paths that take it
                paths = [
                    str(r["settlement"])
                    for r in spec.table("adapter-protocol", "settlements").rows
                    if value in r["bindings"] and r["settlement"] in effective[SETTLEMENTS]
                ]
                reached += [str(r["operation"]) for r in rows if reaches(r, SETTLEMENTS, paths)]
            if reached and not set(reached) & implemented:
                raise AdapterUsageError(
                    f"{at} claims {claim} {value!r}, but operations lists none of the operations it needs "
                    f"({', '.join(reached)}), so nothing of it could be tested; list them, or drop the claim",
                    "idle-claim",
                )


def _requirement(claim: str, values: Any) -> str:
    return f"any {claim} claim" if values == "any" else f"{claim} {' or '.join(map(str, values))}"


def _kind(value: Any) -> str:
    """A JSON value named by its kind and, when short, itself: `the integer 1`, `a list`."""
    if value is None:
        return "null (None)"
    kinds = {bool: "the boolean", int: "the integer", float: "the number", str: "the string"}
    for kind, word in kinds.items():
        if type(value) is kind:
            shown = repr(value) if kind is not str else f'"{value}"'
            return f"{word} {shown}" if len(shown) <= 40 else f"{word} {shown[:40]}…"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list | tuple) else f"a {type(value).__name__}"


def _schema_message(error: Any, declaration: Any) -> str:
    """The schema error, said as what was expected: a missing or unknown key by name, a version by
    its form; anything else as the validator says it, with the offending value."""
    keys = ["protocol", "bindings", "providers", "process_drivers"]
    optional = ["background", SETTLEMENTS, OPERATIONS, "implementation"]
    if not error.absolute_path and error.validator == "required":
        missing = [k for k in error.validator_value if k not in declaration]
        return (
            f"it lacks the key {missing[0]!r}: every declaration has the keys {', '.join(keys)} "
            "(an empty claim is written as [] or {})"
        )
    if not error.absolute_path and error.validator == "additionalProperties":
        unknown = [k for k in declaration if k not in keys + optional]
        near = difflib.get_close_matches(str(unknown[0]), keys + optional, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"unknown key {unknown[0]!r}{hint}: its keys are {', '.join(keys)} and optionally {', '.join(optional)}"
    if list(error.absolute_path)[:1] == ["providers"] and error.validator == "pattern":
        return (
            f"the version of provider {error.absolute_path[-1]!r} must be MAJOR.MINOR.PATCH "
            f"(such as the locked one), not {_kind(error.instance)}"
        )
    return describe_error(error)
