"""The lines of a failed Codex run's diagnostic, built from closed vocabularies alone.

The failure line prints the stage, the category, an HTTP status the category keeps and the
process outcome Node reports; the permission line prints the latest unattended fact. Neither
ever copies product text (messages, details, commands, stderr, ids): ``Failure`` carries only
the classified facts, so there is nothing else to print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reference_impl.codex_permissions import PermissionFact
from reference_impl.diagnostic import NODE_SIGNALS
from reference_impl.process import ProcessOutcome

Stage = Literal["turn-start", "turn", "process"]

PRODUCT = "Codex"


@dataclass(frozen=True)
class Failure:
    """The structured facts of a failed run; the diagnostic is built from these alone."""

    stage: Stage
    category: str
    http_status: int | None = None


def failure_line(failure: Failure, outcome: ProcessOutcome | None) -> str:
    fields = [f"product: {PRODUCT}", f"stage: {failure.stage}", f"category: {failure.category}"]
    if failure.http_status is not None:
        fields.append(f"HTTP status: {failure.http_status}")
    if outcome is not None and outcome.exit_code is not None:
        fields.append(f"exit code: {outcome.exit_code}")
    if outcome is not None and outcome.signal in NODE_SIGNALS:
        fields.append(f"signal: {outcome.signal}")
    return "Product subagent failure (" + "; ".join(fields) + ")"


def permission_line(mode: str, fact: PermissionFact) -> str:
    return (
        f"{PRODUCT} unattended decision (mode: {mode}; request: {fact.request}; decision: {fact.decision}): "
        f"{fact.reason}"
    )
