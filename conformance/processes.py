"""Calling a process operation with a deadline, and proving afterwards that no process survived.

Every run gets a fresh token in its environment; fakes and anything they start inherit it.
After the call, /proc is searched for processes still carrying a token: "no process of the
scenario is alive" is checked, not assumed, and survivors are killed so they cannot leak into
later tests even when this one fails.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_RUN"
DEFAULT_DEADLINE = 20.0  # seconds one call may take before the adapter counts as hung

Json = Any


@dataclass(frozen=True)
class Survivor:
    pid: int
    argv: list[str]

    def __str__(self) -> str:
        return f"pid {self.pid}: {' '.join(self.argv)[:200]}"


def new_token() -> str:
    return f"run-{uuid.uuid4().hex}"


def carrying(tokens: set[str]) -> list[Survivor]:
    """Live (non-zombie) processes whose environment carries one of ``tokens``."""
    needles = {f"{RUN_TOKEN_VARIABLE}={token}".encode() for token in tokens}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if not any(b"\0" + needle + b"\0" in b"\0" + environ for needle in needles):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # exited; only its parent's wait is missing
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        found.append(Survivor(int(entry.name), [a for a in argv if a]))
    return found


def kill(survivors: list[Survivor]) -> None:
    for survivor in survivors:
        with contextlib.suppress(OSError):
            os.kill(survivor.pid, signal.SIGKILL)


class ProcessTierFailure(AssertionError):
    """A process operation hung, or left processes of its runs alive."""


def call_runs(adapter: Any, operation: str, runs: list[Json], deadline: float = DEFAULT_DEADLINE) -> list[Json]:
    """Call ``operation`` on ``runs`` (each gains a token), within ``deadline`` seconds; check and clean up."""
    tokens = [new_token() for _ in runs]
    request = {
        "runs": [
            {**run, "env": {**run["env"], RUN_TOKEN_VARIABLE: token}} for run, token in zip(runs, tokens, strict=True)
        ]
    }
    answer: list[Any] = []
    error: list[BaseException] = []

    def call() -> None:
        try:
            answer.append(adapter.call(operation, request))
        except BaseException as exc:  # re-raised in the test's thread
            error.append(exc)

    worker = threading.Thread(target=call, name=f"{operation}-call", daemon=True)
    worker.start()
    worker.join(deadline)
    survivors = carrying(set(tokens))
    kill(survivors)
    if worker.is_alive():
        raise ProcessTierFailure(
            f"{operation} did not answer within {deadline:g} s (the adapter hangs); "
            f"{len(survivors)} process(es) of its runs were still alive and have been killed"
            + "".join(f"\n  {s}" for s in survivors)
        )
    if error:
        raise error[0]
    if survivors:
        raise ProcessTierFailure(
            f"{operation} answered, but {len(survivors)} process(es) of its runs were still alive "
            "(no process may outlive dispose() or a start() rejection); they have been killed:"
            + "".join(f"\n  {s}" for s in survivors)
        )
    outcomes: list[Json] = answer[0]["runs"]
    if len(outcomes) != len(runs):
        raise ProcessTierFailure(f"{operation} answered {len(outcomes)} outcome(s) for {len(runs)} run(s)")
    return outcomes
