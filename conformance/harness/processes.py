"""Finding the processes a run left alive, by a token in their environment, and killing them.

Every run (and every exec adapter) gets a fresh token in its environment; fakes and anything
they start inherit it. /proc is searched for processes still carrying a token: "no process of
the scenario is alive" is checked, not assumed, and survivors are killed so they cannot leak
into later tests even when this one fails (conformance/process/calls.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

RUN_TOKEN_VARIABLE = "SUBAGENT_CONFORMANCE_RUN"


@dataclass(frozen=True)
class Survivor:
    pid: int
    argv: list[str]
    token: str = ""  # the run token it carries

    def __str__(self) -> str:
        return f"pid {self.pid}: {' '.join(self.argv)[:200]}"


def new_token() -> str:
    return f"run-{uuid.uuid4().hex}"


# A process in the middle of exec has no environment to read yet: its parent's fork returned
# (subprocess.Popen returns once exec is past its point of no return) but the new image's
# environment is not set up, so /proc/PID/environ reads empty or refuses. Such a process is
# read again a few times; one that stays unreadable (another user's, or init) is remembered
# by its start time and not waited for again.
_UNSETTLED = object()
_SETTLE_PAUSE = 0.005
_SETTLE_TRIES = 20
_PF_KTHREAD = 0x00200000
_UNREADABLE: set[tuple[int, str]] = set()  # (pid, start time) of processes found unreadable for good


def carrying(tokens: set[str], variable: str = RUN_TOKEN_VARIABLE) -> list[Survivor]:
    """Live (non-zombie) processes whose environment carries one of ``tokens`` in ``variable``."""
    needles = {f"{variable}={token}".encode(): token for token in tokens}
    found: list[Survivor] = []
    unsettled: list[Path] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        seen = _read_survivor(entry, needles)
        if seen is _UNSETTLED:
            unsettled.append(entry)
        elif isinstance(seen, Survivor):
            found.append(seen)
    for _ in range(_SETTLE_TRIES):
        if not unsettled:
            break
        time.sleep(_SETTLE_PAUSE)
        again = []
        for entry in unsettled:
            seen = _read_survivor(entry, needles)
            if seen is _UNSETTLED:
                again.append(entry)
            elif isinstance(seen, Survivor):
                found.append(seen)
        unsettled = again
    for entry in unsettled:
        with contextlib.suppress(OSError, IndexError):
            _UNREADABLE.add((int(entry.name), _stat(entry)[19]))
    return found


def _stat(entry: Path) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first)."""
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()


def _read_survivor(entry: Path, needles: dict[bytes, str]) -> Survivor | object | None:
    """The process as a Survivor if it carries a needle, None if not (or gone, or a zombie),
    _UNSETTLED if its environment cannot be read yet."""
    try:
        environ = (entry / "environ").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None  # gone, or a kernel thread
    except OSError:
        environ = b""
    try:
        if not environ:
            fields = _stat(entry)
            if fields[0] in ("Z", "X") or int(fields[6]) & _PF_KTHREAD:
                return None
            return None if (int(entry.name), fields[19]) in _UNREADABLE else _UNSETTLED
        token = next((t for n, t in needles.items() if b"\0" + n + b"\0" in b"\0" + environ), None)
        if token is None:
            return None
        if _stat(entry)[0] == "Z":
            return None  # exited; only its parent's wait is missing
        argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except (OSError, IndexError, ValueError):
        return None  # gone meanwhile
    return Survivor(int(entry.name), [a for a in argv if a], token)


def kill(survivors: list[Survivor]) -> None:
    for survivor in survivors:
        with contextlib.suppress(OSError):
            os.kill(survivor.pid, signal.SIGKILL)
