"""What start() checks of a run's request before anything is spawned.

The working directory and the task are checked in the order of table startup_rejections, so
that a request wrong in several ways is rejected for the first of them, always with one of the
product's fixed texts: nothing the request holds is ever echoed back to the parent.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


class StartRejected(Exception):
    """start() rejects; the message is the safe text the parent sees."""


@dataclass(frozen=True)
class StartTexts:
    """A product's start() rejections for what is checked before anything is spawned, in the
    order of table startup_rejections (orders 1-4)."""

    no_cwd: str
    unusable_cwd: str
    not_text: str
    empty: str
    aborted: str


def admit(request: Json, aborted: Callable[[], bool], texts: StartTexts, is_blank: Callable[[str], bool]) -> list[str]:
    """The working directory and the task checked in the table's order; the task's texts, or StartRejected."""
    cwd = request["cwd"]
    if cwd is None:
        raise StartRejected(texts.no_cwd)
    if not usable_directory(cwd):
        raise StartRejected(texts.aborted if aborted() else texts.unusable_cwd)
    found: list[str] = []
    for block in request["task"]:
        if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            raise StartRejected(texts.not_text)
        found.append(block["text"])
    if not found:
        raise StartRejected(texts.not_text)
    if all(is_blank(text) for text in found):
        raise StartRejected(texts.empty)
    if aborted():
        raise StartRejected(texts.aborted)
    return found


def usable_directory(cwd: str) -> bool:
    """An absolute path to a directory the child can enter."""
    return os.path.isabs(cwd) and os.path.isdir(cwd) and os.access(cwd, os.X_OK)
