"""The provider-authored failure texts and the diagnostic bound.

A product provider reports a failure as one fixed, safe line built only from what it
classified (product, stage, category) and what it observed (an HTTP status a Codex
connection or stream error kept, the managed process's exit code and signal), optionally
followed by the latest unattended permission decision. start() and dispose() reject with
the same line behind the product's prefix. Nothing the product said is ever copied: every
value printed here is a fixed label, a closed-set name or a bounded integer. Whatever
diagnostic a result finally carries reaches the parent as at most 4096 UTF-8 bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_DIAGNOSTIC_BYTES = 4096
TRUNCATION_SUFFIX = "\n[diagnostic truncated]"

CLAUDE_CODE = "Claude Code"
CODEX = "Codex"
ERROR_PREFIX = {CLAUDE_CODE: "subagent-claude-code: ", CODEX: "subagent-codex: "}

# Codex's connection and stream errors are the only failures whose HTTP status is kept.
HTTP_STATUS_CATEGORIES = frozenset(
    {
        "httpConnectionFailed",
        "responseStreamConnectionFailed",
        "responseStreamDisconnected",
        "responseTooManyFailedAttempts",
    }
)
MAX_HTTP_STATUS = 65535
MAX_EXIT_CODE = 4294967295

# The signal names Node.js reports on Linux; any other name is not printed.
NODE_SIGNALS = frozenset(
    {
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    }
)

Json = dict[str, Any]


def bound_diagnostic(text: str) -> str:
    """Cut an over-long diagnostic on a code-point boundary and mark the cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_DIAGNOSTIC_BYTES:
        return text
    cut = MAX_DIAGNOSTIC_BYTES - len(TRUNCATION_SUFFIX.encode("utf-8"))
    while encoded[cut] & 0xC0 == 0x80:  # a continuation byte: the cut would split a code point
        cut -= 1
    return encoded[:cut].decode("utf-8") + TRUNCATION_SUFFIX


def _integer_within(value: Any, maximum: int) -> int | None:
    """``value`` as an integer 0..maximum, or None: a boolean, fraction or out-of-range number is no value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    number = int(value)
    return number if 0 <= number <= maximum else None


@dataclass(frozen=True)
class FailureFacts:
    """What a provider knows when a failure is reported: its own classification and the
    facts it observed. ``None`` means "not observed"."""

    product: str
    stage: str
    category: str
    http_status: Any = None
    exit_code: Any = None
    signal: Any = None

    @classmethod
    def from_json(cls, product: str, facts: Json) -> FailureFacts:
        return cls(
            product,
            facts["stage"],
            facts["category"],
            facts.get("httpStatus"),
            facts.get("exitCode"),
            facts.get("signal"),
        )

    def printable_http_status(self) -> int | None:
        """Only a Codex connection or stream error prints the status it kept."""
        if self.product != CODEX or self.category not in HTTP_STATUS_CATEGORIES:
            return None
        return _integer_within(self.http_status, MAX_HTTP_STATUS)

    def printable_exit_code(self) -> int | None:
        """0 is an exit code like any other: it is printed."""
        return _integer_within(self.exit_code, MAX_EXIT_CODE)

    def printable_signal(self) -> str | None:
        return self.signal if self.signal in NODE_SIGNALS else None

    def fields(self) -> list[str]:
        fields = [f"product: {self.product}", f"stage: {self.stage}", f"category: {self.category}"]
        http_status = self.printable_http_status()
        if http_status is not None:
            fields.append(f"HTTP status: {http_status}")
        exit_code = self.printable_exit_code()
        if exit_code is not None:
            fields.append(f"exit code: {exit_code}")
        signal = self.printable_signal()
        if signal is not None:
            fields.append(f"signal: {signal}")
        return fields

    def line(self) -> str:
        return "Product subagent failure (" + "; ".join(self.fields()) + ")"

    def error_text(self) -> str:
        """The message of a start() or dispose() rejection carrying this failure."""
        return ERROR_PREFIX[self.product] + self.line()


def permission_line(product: str, mode: str, request: str, decision: str, reason: str) -> str:
    """The latest unattended decision of a run, with the fixed reason of its trigger."""
    return f"{product} unattended decision (mode: {mode}; request: {request}; decision: {decision}): {reason}"


def result_diagnostic(failure: FailureFacts, permission: Json | None = None) -> str:
    """A failed run's diagnostic: the failure line, then the latest permission line if any."""
    if permission is None:
        return failure.line()
    latest = permission_line(
        failure.product, permission["mode"], permission["request"], permission["decision"], permission["reason"]
    )
    return failure.line() + "\n" + latest


def rejection_text(failures: list[FailureFacts]) -> str:
    """start()/dispose() rejection: the startup text, then the failed rollback's text when there is one."""
    return "; ".join(failure.error_text() for failure in failures)


def format_diagnostic(request: Json, facts_class: type[FailureFacts] = FailureFacts) -> dict[str, str]:
    """The format_diagnostic operation: ``{"kind", "facts"}`` -> ``{"text"}``."""
    kind, facts = request["kind"], request["facts"]
    product = facts["product"]
    if kind == "permission-line":
        text = permission_line(product, facts["mode"], facts["request"], facts["decision"], facts["reason"])
    elif kind == "failure-line":
        text = facts_class.from_json(product, facts).line()
    elif kind == "run-result":
        text = result_diagnostic(facts_class.from_json(product, facts), facts.get("permission"))
    elif kind in ("start-rejection", "dispose-rejection"):
        text = rejection_text([facts_class.from_json(product, failure) for failure in facts["failures"]])
    else:
        raise ValueError(f"unknown text kind {kind!r}")
    return {"text": text}
