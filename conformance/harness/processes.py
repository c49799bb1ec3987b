"""Finding the processes a run left alive, by a token in their environment or as orphans
adopted by this process (a child subreaper), and killing them.

Every run (and every exec adapter) gets a fresh token in its environment; fakes and anything
they start inherit it. /proc is searched for processes still carrying a token: "no process of
the scenario is alive" is checked, not assumed, and survivors are killed so they cannot leak
into later tests even when this one fails (conformance/process/calls.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
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


# ---------------------------------------------------------------- orphans, adopted
#
# The token above is inherited only by processes that keep their environment: a grandchild that
# calls setsid and execs with a cleared environment carries nothing to find it by. So where the
# kernel allows it the process that runs exec adapters becomes a child subreaper
# (prctl(PR_SET_CHILD_SUBREAPER), Linux 3.4): an orphan anywhere below it is re-parented to it
# instead of to init, however it detached, and is found as a child it never started. This needs
# no cooperation from the adapter, unlike the token; a cgroup would too, but is writable in few
# CI containers, while prctl needs no privilege. Elsewhere (macOS) only the token search remains,
# and the run's report says so (run.stray_search).

PR_SET_CHILD_SUBREAPER = 36
_subreaper: str | None = None  # how strays are searched for, once decided


def become_subreaper() -> str:
    """Make this process adopt the orphans of everything below it, once; return how strays are
    searched for in this run ("subreaper", or the token only and why), for the run's report."""
    global _subreaper
    if _subreaper is not None:
        return _subreaper
    if not sys.platform.startswith("linux"):
        _subreaper = f"token only: no child subreaper on {sys.platform}; a process that clears its environment escapes"
        return _subreaper
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        _subreaper = f"token only: prctl(PR_SET_CHILD_SUBREAPER) failed ({os.strerror(errno)})"
    else:
        _subreaper = "subreaper"
    return _subreaper


def stray_search() -> str:
    """How this run searches for strays: "subreaper", or "token only: why" (never asked: token only)."""
    return _subreaper or "token only: no exec adapter started, so no subreaper was needed"


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (the kernel's list, re-parented orphans included)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found.extend(int(word) for word in (task / "children").read_text().split())
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before children."""
    found: list[int] = []
    todo = children(pid)
    while todo:
        child = todo.pop(0)
        if child not in found:
            found.append(child)
            todo.extend(children(child))
    return found


def state(pid: int) -> str:
    """The process's state letter in /proc (R, S, T for stopped, Z...); "" when gone or unknown."""
    try:
        return _stat(Path(f"/proc/{pid}"))[0]
    except (OSError, IndexError):
        return ""


def group_of(pid: int) -> int:
    """The process group of ``pid``; 0 when gone."""
    try:
        return int(_stat(Path(f"/proc/{pid}"))[2])
    except (OSError, IndexError, ValueError):
        return 0


def started_here() -> set[int]:
    """The children this process started itself and still owns (a subprocess.Popen or a
    multiprocessing child not yet reaped): these are not orphans. A scan of the heap, so it
    runs only when a child is there to explain."""
    owned = {p.pid for p in multiprocessing.active_children() if p.pid is not None}
    owned.update(o.pid for o in gc.get_objects() if isinstance(o, subprocess.Popen) and o.returncode is None)
    return owned


def adopted(exclude: set[int]) -> list[int]:
    """The orphans this (subreaper) process adopted: its children it did not start, and theirs."""
    if _subreaper != "subreaper":
        return []
    candidates = [pid for pid in children(os.getpid()) if pid not in exclude]
    if not candidates:
        return []
    owned = started_here()
    orphans = [pid for pid in candidates if pid not in owned]
    return [*orphans, *(d for pid in orphans for d in descendants(pid))]


def describe(pid: int) -> Survivor | None:
    """A live (non-zombie) process as a Survivor, None when gone or a zombie."""
    entry = Path(f"/proc/{pid}")
    try:
        if _stat(entry)[0] in ("Z", "X"):
            return None
        argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except (OSError, IndexError):
        return None
    return Survivor(pid, [a for a in argv if a])


def reap(pids: list[int], wait: float = 1.0) -> None:
    """Collect the exit of those of ``pids`` that are this process's children (adopted orphans
    killed), so that none stays a zombie; a pid that is not a child is skipped."""
    end = time.monotonic() + wait
    left = list(pids)
    while left:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid  # not ours (a grandchild), or reaped already
            if done:
                left.remove(pid)
        if not left or time.monotonic() > end:
            return
        time.sleep(0.01)


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def kill_tree(popen: subprocess.Popen[bytes], tokens: set[str], variable: str, exclude: set[int]) -> list[Survivor]:
    """Kill the process group ``popen`` leads and every process below it outside the group (seen
    in the process tree while it lives, or adopted as an orphan by this subreaper once its parent
    died, however it detached), then anything else still carrying one of ``tokens``; return
    those outside the group, killed and reaped. ``exclude``: live children that are no orphans."""
    pid = popen.pid
    below = [d for d in descendants(pid) if group_of(d) != pid]
    strays = [s for s in map(describe, below) if s is not None]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the leader and anything it started in its group
    kill_pids(below)
    popen.wait()
    for _ in range(3):  # an orphan killed may leave orphans of its own, adopted in turn
        orphans = adopted(exclude)
        if not orphans:
            break
        strays += [s for s in map(describe, orphans) if s is not None and s.pid not in {x.pid for x in strays}]
        kill_pids(orphans)
        reap(orphans)
    reap(below)
    tokened = [s for s in carrying(tokens, variable) if s.pid not in {x.pid for x in strays}]
    kill(tokened)
    return strays + tokened
