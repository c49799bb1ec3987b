"""What the exec transport says, and by which limits: the limits of table exec_limits as one
value, and the sentences its failures share (how a process ended, what outlived it, why a
command that hung at describe may be an unquoted one). Apart from exec_adapter, which owns the
process and the calls, to keep each readable."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conformance.harness.processes import Survivor
from conformance.spec import Spec


@dataclass(frozen=True)
class Limits:
    """The exec protocol's limits (adapter-protocol.yaml, table exec_limits)."""

    describe_timeout: float
    pure_call_timeout: float
    process_call_timeout: float
    shutdown_grace: float
    stderr_tail: int
    response_line_max: int
    shown_value_max: int
    exit_reap: float = 0.5  # seconds (the table says milliseconds)
    stopped_grace: float = 0.5  # seconds (likewise)

    @classmethod
    def from_spec(cls, spec: Spec, pure_call_timeout: float | None = None) -> Limits:
        rows = spec.table("adapter-protocol", "exec_limits").rows
        values = {row["name"]: row["value"] / 1000 if row["unit"] == "milliseconds" else row["value"] for row in rows}
        if pure_call_timeout is not None:
            values["pure_call_timeout"] = pure_call_timeout
        return cls(**values)


# Interpreters that, given no program, read one from stdin: they take the requests for a script and never answer.
_INTERPRETER = re.compile(
    r"(node(js)?|python[0-9.]*|pypy[0-9.]*|deno|bun|ruby|perl|php|lua|tsx|ts-node|[a-z]*sh)(\.exe)?"
)


def bare_interpreter(argv: list[str]) -> str:
    """Why a command that hung at describe may be an unquoted one: the shell split
    ``--impl=exec:node adapter.js`` and pytest got ``exec:node`` alone (adapter.js became a path
    argument), so node waits for its program on stdin. Empty for any other command."""
    if len(argv) != 1 or not _INTERPRETER.fullmatch(Path(argv[0]).name):
        return ""
    return (
        f" ({argv[0]} alone is an interpreter with no program: it reads one from stdin and never answers; "
        f'quote the whole command, e.g. --impl="exec:{argv[0]} adapter.js")'
    )


def how(status: int) -> str:
    return f"killed by signal {-status}" if status < 0 else f"exit status {status}"


def strays_sentence(survivors: list[Survivor]) -> str:
    if not survivors:
        return ""
    return (
        f"; {len(survivors)} process(es) it started outlived it (outside its process group) and were killed:"
        + "".join(f"\n  {s}" for s in survivors)
    )
