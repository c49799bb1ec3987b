"""CDX-040's blame: whether a Codex answer's difference is the doing of how stderr was cut into
chunks (kept apart from blame.py, which holds the other ignored-part rules, for size)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.areas.codex.blame import comparable

Json = dict[str, Any]


def split_stderr_rule(
    outcome: Callable[[Json], Json], request: Json, expected: Json, signatures: list[str]
) -> list[str] | None:
    """CDX-040 when the difference is the doing of how stderr was cut into chunks: with each run of
    adjacent chunks that a signature spans healed into one chunk (the spec's result stays the same:
    the tail carries every signature across a cut) the adapter answers as the spec says. A run no
    signature spans is kept, since joining chunks that each hold a whole signature changes which
    fact is latest in its chunk. None when no cut splits one, or when healing does not help."""
    runs: list[list[Json]] = []
    for event in request["events"]:
        stderr_only = set(event) == {"stderr"}
        if stderr_only and runs and runs[-1] and set(runs[-1][-1]) == {"stderr"}:
            runs[-1].append(event)
        else:
            runs.append([event])
    events: list[Json] = []
    for run in runs:
        parts = [str(e["stderr"]) for e in run] if len(run) > 1 else []
        cuts = [sum(len(p) for p in parts[:k]) for k in range(1, len(parts))]
        joined = "".join(parts)
        if cuts and any(_spans(joined, cut, signature) for cut in cuts for signature in signatures):
            events.append({"stderr": joined})
        else:
            events.extend(run)
    if len(events) == len(request["events"]):
        return None
    return ["CDX-040"] if comparable(outcome({**request, "events": events})) == expected else None


def _spans(text: str, cut: int, signature: str) -> bool:
    """Whether an occurrence of ``signature`` in ``text`` starts before ``cut`` and ends after it."""
    start = text.find(signature, max(0, cut - len(signature) + 1))
    while start != -1 and start < cut:
        if start + len(signature) > cut:
            return True
        start = text.find(signature, start + 1)
    return False
