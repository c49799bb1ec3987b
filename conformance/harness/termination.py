"""SIGTERM to the run (a CI timeout, a cancelled job): the run stops as it would on Ctrl-C, so
that pytest still finishes its session: the exec adapters, in sessions of their own that the
signal never reaches, are killed with their strays, and the report and the summary are written,
marked incomplete. Without a handler SIGTERM ends the interpreter at once, and nothing is written.

Under xdist the controller forwards the signal to its workers (``forward_workers``): sent to the
controller's pid alone (``kill PID``, not the group), it would leave each worker in its call, and
the controller waiting for them until execnet killed them with their adapters still alive.

The signal is raised as :class:`Terminated`, a KeyboardInterrupt, which is what pytest stops a run
for (and finishes the session after); the adapter tells it from a KeyboardInterrupt a Python
operation raised itself (conformance/harness/adapter.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

from conformance.harness.processes import started_here


class Terminated(KeyboardInterrupt):
    """The run got SIGTERM: it stops, and finishes its session."""


_received: list[str] = []
_finishing = [False]  # once the session finishes, a SIGTERM is noted, not raised into the writing
_forwarding = [False]  # this process is an xdist controller: a SIGTERM is sent on to its workers


def install(worker: bool = False) -> Callable[[], None]:
    """Turn SIGTERM into :class:`Terminated` while the run lasts (main thread only, and only where
    nobody else handles SIGTERM); return the function that puts the previous handler back. In an
    xdist ``worker`` a second SIGTERM is only noted: a SIGTERM to the process group reaches it twice,
    once from the kernel and once from its controller, and the second must not end it before it
    has killed its adapters (each in a session of its own, which nothing else would reach)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None
    _received.clear()
    _finishing[0] = _forwarding[0] = False

    def terminate(signum: int, frame: FrameType | None) -> None:
        _received.append("terminated by SIGTERM (a CI timeout or a cancelled job, say)")
        if not worker:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        if _forwarding[0]:
            _to_workers()
        if not _finishing[0] and len(_received) == 1:
            raise Terminated("SIGTERM")

    signal.signal(signal.SIGTERM, terminate)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return restore


def finishing() -> str | None:
    """The session is finishing: from now on a SIGTERM is only noted. Why the run was stopped
    by a signal, if it was."""
    _finishing[0] = True
    return _received[0] if _received else None


def forward_workers() -> None:
    """This process is an xdist controller: a SIGTERM it gets is sent on to its workers."""
    _forwarding[0] = True


def _to_workers() -> None:
    """SIGTERM to the processes this one started that share its session: its xdist workers, which a
    SIGTERM to the process group would have reached too. Exec adapters, each in a session of its
    own, are this process's to kill (with their strays), not to signal."""
    session = os.getsid(0)
    for pid in started_here():
        with contextlib.suppress(OSError):
            if os.getsid(pid) == session:
                os.kill(pid, signal.SIGTERM)
