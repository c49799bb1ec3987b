"""SHOULDs reported, never deciding the verdict.

Where the sources leave a choice open, the suite accepts every option a correct implementation
may take; the option a source recommends is a SHOULD. A check that finds a SHOULD unmet calls
:func:`advise` instead of raising: the test passes, the advisory travels with its report (the
``advisories`` user property, so it survives pytest-xdist), and the requirement's status is
``not-met`` — shown in the terminal, the JSON report, the summary and the matrix, but never a
failure, and never counted against the verdict.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from conformance.spec import load_spec

ADVISORIES_PROPERTY = "advisories"
_MOST = 20  # distinct advisories one test keeps; the rest are counted

_found: ContextVar[list[dict[str, Any]] | None] = ContextVar("advisories", default=None)


def advise(
    requirements: Iterable[str], *, operation: str | None, input: Any, expected: Any, actual: Any, detail: str
) -> None:
    """Record that a SHOULD is unmet by this answer (once per distinct detail; later ones counted)."""
    ids = list(dict.fromkeys(requirements))
    spec = load_spec()
    musts = [rid for rid in ids if spec.requirement(rid).level != "SHOULD"]
    if not ids or musts:
        raise ValueError(f"an advisory names SHOULD requirements only, not {musts or 'none'}")
    found = _found.get()
    if found is None:
        return  # outside a test of the suite (a check called directly): nothing to report to
    for record in found:
        if record["requirements"] == ids and record["detail"] == detail:
            record["count"] += 1
            return
    if len(found) < _MOST:
        found.append(
            {
                "requirements": ids,
                "operation": operation,
                "input": input,
                "expected": expected,
                "actual": actual,
                "detail": detail,
                "count": 1,
            }
        )


@contextlib.contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """The advisories of one test call."""
    found: list[dict[str, Any]] = []
    token = _found.set(found)
    try:
        yield found
    finally:
        _found.reset(token)


def as_property(found: list[dict[str, Any]]) -> str:
    return json.dumps(found, ensure_ascii=True, default=repr)


def advised(test: dict[str, Any]) -> set[str]:
    """The requirements a test's advisories name."""
    return {rid for record in test.get(ADVISORIES_PROPERTY, ()) for rid in record["requirements"]}
