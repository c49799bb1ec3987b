"""Loading the implementation under test (``--impl``) and calling its operations.

An adapter declares what it claims in ``CONFORMANCE``; every operation takes and
returns JSON-shaped values, and every response is validated against the operation's
schema in ``spec/schema/operations.json`` before a test looks at it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import marshal
import queue
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from conformance.harness import validation
from conformance.harness.claims import Claims
from conformance.harness.exec_adapter import ExecFailure, ExecTarget
from conformance.harness.repeats import Memory, RepeatedFailure, exception_signature, input_key, where
from conformance.harness.termination import Terminated
from conformance.spec import Spec
from conformance.verdict.operations import RUNNING, UndeclaredOperation


class AdapterResponseError(AssertionError):
    """The adapter answered with a value its operation's schema does not allow (ADP-012)."""

    requirements = ("ADP-012",)


class NonDeterministic(AssertionError):
    """A pure operation answered one input two ways (ADP-014)."""

    requirements = ("ADP-014",)


class MissingOperation(AssertionError):
    """The adapter claims an area but lacks an operation that area needs (ADP-010)."""

    requirements = ("ADP-010",)


class OperationError(AssertionError):
    """An operation raised: always the adapter's own failure, never an expected outcome (ADP-013)."""

    requirements = ("ADP-013",)
    hung: str | None = None  # how the call waited out its deadline, when it did (as ExecFailure's)


class OperationTimeout(OperationError):
    """A Python operation did not return within its deadline (ADP-018); the suite stopped waiting."""

    requirements = ("ADP-018",)


# The provider operations whose input carries the claimed product version (operations.json).
PRODUCT_OPERATIONS = {
    "codex_outcome": "codex",
    "run_codex": "codex",
    "claude_code_outcome": "claude-code",
    "run_claude_code": "claude-code",
}


@dataclass(repr=False)
class Adapter:
    """A loaded adapter: its declaration, and a validated way to call it."""

    def __repr__(self) -> str:  # a fixture's repr opens every traceback: one line
        return f"Adapter({self.impl!r})"

    impl: str
    declaration: dict[str, Any]
    target: Any
    spec: Spec
    close: Callable[..., list[Any]] | None = None  # ends an exec adapter (grace=None); returns what outlived it, killed
    exec_process: Any = None  # an exec adapter's ExecAdapter: how strays are searched, how it took end of input
    home: Path | None = None  # a Python adapter's own source: its frames are the ones a failure shows
    call_timeout: float | None = None  # a Python adapter's pure-call deadline; None for exec (it times itself)
    _worker: _Worker | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._tiers = {row["operation"]: row["tier"] for row in self.spec.table("adapter-protocol", "operations").rows}
        limits = {row["name"]: row["value"] for row in self.spec.table("adapter-protocol", "exec_limits").rows}
        self._memory = Memory(limits["shown_value_max"])  # the run's failures of pure operations

    @property
    def declared(self) -> tuple[frozenset[str], str] | None:
        """While a conformance test runs: the operations its module declares, and the module's name
        (conformance.verdict.operations.RUNNING, in the calling context)."""
        return RUNNING.get()

    @declared.setter
    def declared(self, value: tuple[frozenset[str], str] | None) -> None:
        RUNNING.set(value)

    @functools.cached_property
    def _claims(self) -> Claims:
        return Claims.of(self.declaration, self.spec)

    def claims(self, claim: str, value: str) -> bool:
        """Whether the declaration claims ``value`` under ``claim``, an optional key absent meaning
        what the spec says it means; ``claims("operations", op)``: whether it implements ``op``."""
        return self._claims.claims(claim, value)

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
        payload = self.versioned(name, payload)
        if self.declared is not None and name not in self.declared[0]:
            operations, module = self.declared
            warnings.warn(
                UndeclaredOperation(
                    f"{module} calls operation {name!r}, which its OPERATIONS do not declare "
                    f"({', '.join(sorted(operations)) or 'none'}): a suite bug, please report it"
                ),
                stacklevel=2,
            )
        pure = self._tiers.get(name) == "pure"  # the tier Hypothesis drives; a process call is its scenario's
        key = input_key(payload) if pure else b""
        try:
            if pure and (refused := self._memory.refuse_hung(name) or self._memory.refuse_known(name, key)):
                raise refused
            answer = self._call(name, payload)
            if pure:
                self._check_determinism(name, key, payload, answer)
            return answer
        except (
            AdapterResponseError,
            MissingOperation,
            OperationError,
            ExecFailure,
            RepeatedFailure,
            NonDeterministic,
        ) as exc:
            exc.operation, exc.input = name, payload  # type: ignore[union-attr]
            if pure and isinstance(exc, (OperationError, ExecFailure)):
                if exc.hung is None:
                    whole = getattr(exc, "oversized", False)  # a 50 MB answer is not asked for again
                    self._memory.fail(name, key, str(exc), exc.requirements, payload, whole)
                self._remember(name, payload, exc)
            raise

    def _check_determinism(self, name: str, key: bytes, payload: Any, answer: Any) -> None:
        """ADP-014, checked as the suite goes: the first calls of each pure operation are asked twice,
        and any input asked again (Hypothesis replays, vectors shared by tests) is compared with
        its first answer. An operation found answering one input two ways fails here, on ADP-014,
        not later on a content rule, and is not called again in the run."""
        __tracebackhide__ = True
        said = self._memory.drift(name, key, answer, payload)
        if said is None and self._memory.repeat_due(name):
            said = self._memory.drift(name, key, self._call(name, payload), payload)
        if said is not None:
            raise NonDeterministic(said)

    def versioned(self, name: str, payload: Any) -> Any:
        """A provider operation's input with ``productVersion``, the version the adapter claims for
        that product (the version the run tests), unless the input already says one: the
        operation maps that version's union, whatever its own module declares."""
        product = PRODUCT_OPERATIONS.get(name)
        claimed = self.declaration.get("providers", {}).get(product) if product else None
        if claimed is None or not isinstance(payload, dict) or "productVersion" in payload:
            return payload
        return {**payload, "productVersion": claimed}

    def _remember(self, name: str, payload: Any, exc: OperationError | ExecFailure) -> None:
        """Remember a pure operation's failure: a hang, so that it is not called again; any other,
        so that the same failure again ends its test at once (repeats.py says why)."""
        __tracebackhide__ = True  # bookkeeping: the failure is the call's
        requirements: tuple[str, ...] = exc.requirements
        first_line = str(exc).split("\n", 1)[0]
        if exc.hung is not None:
            self._memory.hang(name, exc.hung, requirements, payload, getattr(exc, "stuck", "hung"))
            return
        # A Python exception is the same when raised the same way; an exec failure when it says the same.
        signature = getattr(exc, "signature", None) or first_line
        again = self._memory.raised_again(name, (type(exc), signature), str(exc), requirements, payload)
        if again is not None:
            again.operation, again.input = name, payload  # type: ignore[attr-defined]
            raise again from None

    def _call(self, name: str, payload: Any) -> Any:
        if problem := validation.first_problem(self.spec.root, f"{name}_input", payload):
            raise AssertionError(f"the suite built an invalid {name} input: {problem}")  # a suite bug
        func = self.operation(name)
        exec_call = isinstance(self.target, ExecTarget)
        # Exec serialises the input anyway (and its failures name what the adapter process did);
        # a Python operation gets its own copy, so that nothing it does to it reaches the oracle.
        answer = func(payload) if exec_call else self._run(name, func, _copy(payload))
        try:
            # One JSON round trip is both the JSON-shape check and the suite's own copy of a
            # Python answer; an exec answer is already the fresh product of parsing its line.
            answer = answer if exec_call else json.loads(json.dumps(answer))
        except (TypeError, ValueError) as exc:
            raise AdapterResponseError(f"{name} returned a value that is not JSON-shaped: {exc}") from None
        except RecursionError:
            raise AdapterResponseError(
                f"{name} returned a value nested too deep to copy (beyond Python's recursion limit, "
                f"{sys.getrecursionlimit()})"
            ) from None
        if problem := validation.first_problem(self.spec.root, f"{name}_output", answer):
            raise AdapterResponseError(f"{name} returned an invalid response: {problem}")
        if name == "fold_output" and len(answer) != len(payload["steps"]):
            raise AdapterResponseError(
                f"fold_output must return one value per step ({len(payload['steps'])} steps), got {len(answer)}"
            )
        return answer

    def _raised(self, name: str, exc: BaseException) -> OperationError:
        """The operation's failure (ADP-013), whatever it raised: KeyboardInterrupt, SystemExit and
        RecursionError included. The adapter's traceback would bury the operation's name: its own
        frames are kept."""
        failure = OperationError(f"{name} raised {type(exc).__name__}: {exc} ({where(exc.__traceback__, self.home)})")
        failure.signature = exception_signature(exc)  # type: ignore[attr-defined]
        return failure

    def _run(self, name: str, func: Callable[[Any], Any], argument: Any) -> Any:
        """Call a Python operation; a pure one on a worker thread the suite stops waiting for at
        its deadline (ADP-018). Process-tier calls keep their own deadlines, on the main thread,
        where a SIGINT that arrives during the call is the user's interrupt and stops the run."""
        if self.call_timeout is None or self._tiers.get(name) != "pure":
            with _user_interrupts() as interrupted:
                try:
                    return func(argument)
                except BaseException as exc:
                    if interrupted or not _adapters_own(exc):
                        raise
                    raise self._raised(name, exc) from None
        if self._worker is None:
            self._worker = _Worker()
        try:  # a KeyboardInterrupt here is the user's: signals reach the main thread, never the worker
            returned, value = self._worker.call(func, argument, self.call_timeout)
        except queue.Empty:
            self._worker = None  # abandoned with the call it is stuck in; the next call gets a fresh one
            timeout = OperationTimeout(
                f"{name} did not return within {self.call_timeout:g} s (pure_call_timeout of the spec's "
                "exec_limits; raise it with --call-timeout); the suite stopped waiting for it"
            )
            timeout.hung = f"it did not return within {self.call_timeout:g} s"
            raise timeout from None
        if not returned:
            if not _adapters_own(value):
                raise value
            raise self._raised(name, value) from None
        return value


def _adapters_own(exc: BaseException) -> bool:
    """Whether what a Python operation raised is its own failure (ADP-013). The suite's own
    outcomes pass through untouched: the claims gate's skip and pytest's other outcome exceptions
    (BaseExceptions that are neither KeyboardInterrupt nor SystemExit), and the failures that
    already name the operation and what it did (ExecFailure, OperationTimeout)."""
    if isinstance(exc, ExecFailure | OperationTimeout | Terminated):  # Terminated: the run got SIGTERM
        return False
    return isinstance(exc, Exception | KeyboardInterrupt | SystemExit)


@contextlib.contextmanager
def _user_interrupts() -> Iterator[list[int]]:
    """While a Python operation runs on the main thread: the SIGINTs that arrived (the user's
    Ctrl-C, raised as usual), told apart from a KeyboardInterrupt the operation raised itself."""
    arrived: list[int] = []
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield arrived  # someone else owns SIGINT: whatever is raised is left to them
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield arrived
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
