"""The survivor scan (conformance.harness.processes.carrying) finds a process caught in the middle of
exec: its parent's fork has returned, but /proc/PID/environ reads empty until the new image's
environment is set up. Missed, such a grandchild let a known-bad teardown pass its startup
rollback scenario about once in twenty runs under load."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.harness import processes
from conformance.harness.processes import RUN_TOKEN_VARIABLE, Survivor, carrying


def test_a_live_process_carrying_a_token_is_found() -> None:
    token = f"run-{uuid.uuid4().hex}"
    env = {**os.environ, RUN_TOKEN_VARIABLE: token}
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    try:
        found = carrying({token})
        assert [s.pid for s in found] == [child.pid] and found[0].token == token
    finally:
        child.kill()
        child.wait()
    assert carrying({token}) == []


def test_a_process_whose_environment_is_not_readable_yet_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reads find no environment (as in the middle of exec), the third finds the token."""
    reads: list[int] = []
    real = processes._read_survivor
    target = str(os.getppid())  # a process that exists and is not this one

    def read(entry: Path, needles: dict[bytes, str]) -> Any:
        if entry.name != target:
            return real(entry, needles)
        reads.append(1)
        return processes._UNSETTLED if len(reads) < 3 else Survivor(int(target), ["argv"], "run-t")

    monkeypatch.setattr(processes, "_read_survivor", read)
    assert [s.pid for s in carrying({"run-t"})] == [int(target)] and len(reads) == 3


def test_a_process_unreadable_for_good_is_waited_for_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the retries, a process that stays unreadable is remembered and not waited for again."""
    target = str(os.getppid())
    real = processes._read_survivor
    reads: list[int] = []

    def read(entry: Path, needles: dict[bytes, str]) -> Any:
        if entry.name != target:
            return real(entry, needles)
        reads.append(1)
        if (int(target), processes._stat(entry)[19]) in processes._UNREADABLE:
            return None
        return processes._UNSETTLED

    monkeypatch.setattr(processes, "_UNREADABLE", set())
    monkeypatch.setattr(processes, "_read_survivor", read)
    assert carrying({"run-t"}) == [] and len(reads) == 1 + processes._SETTLE_TRIES
    assert carrying({"run-t"}) == [] and len(reads) == 2 + processes._SETTLE_TRIES
