"""Loading the implementation under test (``--impl``) and calling its operations.

An adapter declares what it claims in ``CONFORMANCE``; every operation takes and
returns JSON-shaped values, and every response is validated against the operation's
schema in ``spec/schema/operations.json`` before a test looks at it.
"""

from __future__ import annotations

import copy
import difflib
import importlib
import json
import marshal
import os
import queue
import sys
import threading
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import jsonschema

from conformance.harness import validation
from conformance.harness.exec_adapter import ExecAdapter, ExecFailure, ExecStartError, ExecTarget, Limits
from conformance.spec import Spec, describe_error, operations_schema
from conformance.verdict.operations import RUNNING, UndeclaredOperation


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


class OperationTimeout(OperationError):
    """A Python operation did not return within its deadline (ADP-018); the suite stopped waiting."""

    requirements = ("ADP-018",)


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
    close: Callable[[], list[Any]] | None = None  # ends an exec adapter; returns what outlived it, killed
    home: Path | None = None  # a Python adapter's own source: its frames are the ones a failure shows
    call_timeout: float | None = None  # a Python adapter's pure-call deadline; None for exec (it times itself)
    _worker: _Worker | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._tiers = {row["operation"]: row["tier"] for row in self.spec.table("adapter-protocol", "operations").rows}

    @property
    def declared(self) -> tuple[frozenset[str], str] | None:
        """While a conformance test runs: the operations its module declares, and the module's name
        (conformance.verdict.operations.RUNNING, in the calling context)."""
        return RUNNING.get()

    @declared.setter
    def declared(self, value: tuple[frozenset[str], str] | None) -> None:
        RUNNING.set(value)

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
        if self.declared is not None and name not in self.declared[0]:
            operations, module = self.declared
            warnings.warn(
                UndeclaredOperation(
                    f"{module} calls operation {name!r}, which its OPERATIONS do not declare "
                    f"({', '.join(sorted(operations)) or 'none'}): a suite bug, please report it"
                ),
                stacklevel=2,
            )
        try:
            return self._call(name, payload)
        except (AdapterResponseError, MissingOperation, OperationError, ExecFailure) as exc:
            exc.operation, exc.input = name, payload  # type: ignore[union-attr]
            raise

    def _call(self, name: str, payload: Any) -> Any:
        if problem := validation.first_problem(self.spec.root, f"{name}_input", payload):
            raise AssertionError(f"the suite built an invalid {name} input: {problem}")  # a suite bug
        func = self.operation(name)
        exec_call = isinstance(self.target, ExecTarget)
        try:
            # Exec serialises the input anyway; a Python operation gets its own copy, so that
            # nothing it does to it reaches the suite's oracle.
            answer = self._run(name, func, payload if exec_call else _copy(payload))
        except (ExecFailure, OperationTimeout):
            raise  # it names the operation and what the adapter process did
        except Exception as exc:  # the adapter's traceback would bury the operation's name: keep its own frame
            where = self._where(exc.__traceback__)
            raise OperationError(f"{name} raised {type(exc).__name__}: {exc} ({where})") from None
        try:
            # One JSON round trip is both the JSON-shape check and the suite's own copy of a
            # Python answer; an exec answer is already the fresh product of parsing its line.
            answer = answer if exec_call else json.loads(json.dumps(answer))
        except (TypeError, ValueError) as exc:
            raise AdapterResponseError(f"{name} returned a value that is not JSON-shaped: {exc}") from None
        if problem := validation.first_problem(self.spec.root, f"{name}_output", answer):
            raise AdapterResponseError(f"{name} returned an invalid response: {problem}")
        if name == "fold_output" and len(answer) != len(payload["steps"]):
            raise AdapterResponseError(
                f"fold_output must return one value per step ({len(payload['steps'])} steps), got {len(answer)}"
            )
        return answer

    def _run(self, name: str, func: Callable[[Any], Any], argument: Any) -> Any:
        """Call a Python operation; a pure one on a worker thread the suite stops waiting for at
        its deadline (ADP-018). Exec adapters and process-tier calls keep their own deadlines."""
        if self.call_timeout is None or self._tiers.get(name) != "pure":
            return func(argument)
        if self._worker is None:
            self._worker = _Worker()
        try:
            returned, value = self._worker.call(func, argument, self.call_timeout)
        except queue.Empty:
            self._worker = None  # abandoned with the call it is stuck in; the next call gets a fresh one
            raise OperationTimeout(
                f"{name} did not return within {self.call_timeout:g} s (pure_call_timeout of the spec's "
                "exec_limits; raise it with --call-timeout); the suite stopped waiting for it"
            ) from None
        if not returned:
            raise value
        return value

    def _where(self, tb: TracebackType | None) -> str:
        """``at FILE:LINE in FUNC`` for the adapter's own deepest frame, and the library frame
        below it when the exception came from a library the adapter called."""
        frames = traceback.extract_tb(tb)
        if not frames:
            return "no traceback"
        last = frames[-1]
        own = [f for f in frames if self.home is not None and _inside(f.filename, self.home)]
        frame = own[-1] if own else last
        where = f"at {frame.filename}:{frame.lineno} in {frame.name}"
        if frame is not last:
            where += f", inside {last.filename}:{last.lineno} in {last.name}"
        return where


def _inside(filename: str, home: Path) -> bool:
    try:
        path = Path(filename).resolve()
    except OSError:
        return False
    return path == home or path.is_relative_to(home)


def _copy(value: Any) -> Any:
    """A deep copy of a JSON-shaped value: marshal copies dicts, lists and scalars (sharing and
    all) in C, several times faster than copy.deepcopy; anything else falls back to it."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


class _Worker:
    """One daemon thread running a Python adapter's pure calls one at a time, so that a call that
    never returns costs its test and not the run (two C-level queues: ~20 µs a call)."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[[Any], Any], Any]] = queue.SimpleQueue()
        self._answers: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="adapter-call", daemon=True).start()

    def call(self, func: Callable[[Any], Any], argument: Any, timeout: float) -> tuple[bool, Any]:
        """(True, value) or (False, exception); raise queue.Empty when it did not return in time."""
        self._calls.put((func, argument))
        return self._answers.get(timeout=timeout)

    def _serve(self) -> None:
        while True:
            func, argument = self._calls.get()
            try:
                self._answers.put((True, func(argument)))
            except BaseException as exc:  # re-raised in the calling thread
                self._answers.put((False, exc))


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
