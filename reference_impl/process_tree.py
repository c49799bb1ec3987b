"""The managed process's group: spawned on its own, signalled whole, waited for until it is gone.

A provider's subprocess layer (upstream: ``packages/subprocess``) gives the child a process group
of its own, so that teardown reaches every descendant the product started, not just the direct
child. A zombie counts as gone: nothing here reaps orphans, only the direct child is waited for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable

# How often a teardown looks again for a group that is still alive: from the first to the longest pause.
FIRST_PAUSE, LONGEST_PAUSE = 0.001, 0.02


class SpawnFailed(Exception):
    """The spawn itself failed: no process exists, so nothing is signalled or waited for."""


def spawn(argv: list[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The product in a process group of its own, with piped stdin, stdout and stderr."""
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        raise SpawnFailed(type(error).__name__) from error


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (a zombie has exited: only a wait is missing)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def signal_group(pgid: int, number: int) -> None:
    """Signal every process of the group; a group that is gone already is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, number)


def wait_group(pgid: int, child_exited: Callable[[], bool], *, kill_at: float, give_up_at: float | None = None) -> bool:
    """Wait until the direct child has exited and no process of the group runs; SIGKILL the group
    once ``kill_at`` (a monotonic time) has passed. False when ``give_up_at`` passed first."""
    killed = False
    pause = FIRST_PAUSE
    # While the direct child runs the group is alive; only then is /proc searched for the rest.
    while not child_exited() or group_alive(pgid):
        now = time.monotonic()
        if not killed and now >= kill_at:
            signal_group(pgid, signal.SIGKILL)
            killed = True
        if give_up_at is not None and now >= give_up_at:
            return False
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
    return True
