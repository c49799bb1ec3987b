"""Which requirement owns each kind of process-tier difference, per product.

Read off the requirement texts of claude-code.yaml, codex.yaml, diagnostic.yaml and
redaction.yaml: the rule a difference breaks when a leaked source, a failure-line field, a
permission line, a result field, a dispose() settlement or a surviving process differs from
what the spec renders (conformance/process/blame.py diagnoses; this module names). Where a
kind has several candidate rules (the many causes of ``unknown``), the first is the general
rule and the scenario's ``covers`` pick the narrower ones (:func:`pick`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Owners:
    """The requirement each kind of difference demonstrates, for one product."""

    area: str
    stderr: tuple[str, ...]
    grammar: tuple[str, ...]
    prefix: tuple[str, ...]
    aggregate: tuple[str, ...]
    permission_fact: tuple[str, ...]
    permission_where: tuple[str, ...]
    cancellation: tuple[str, ...]
    failed_output: tuple[str, ...]
    completed: tuple[str, ...]  # candidates for a completed result; the first is the default
    outcome: dict[str, tuple[str, ...]]  # by expected stage: the exit code and signal on its line
    category: dict[str, tuple[str, ...]]  # by expected stage: candidates; the first is the default
    idempotent: tuple[str, ...]
    teardown: tuple[str, ...]
    independent: tuple[str, ...]
    cleanup_startup: tuple[str, ...]
    cleanup_dispose: tuple[str, ...]
    launch: tuple[str, ...]
    concurrency: tuple[str, ...]
    # A failure line whose category is right but whose stage is another: the rule that a line
    # names the stage of the failed operation (none: the category's owner is blamed, as for any
    # other (stage, category) difference).
    stage: tuple[str, ...] = ()


OWNERS = {
    "claude-code": Owners(
        area="claude-code",
        stderr=("RED-006",),
        grammar=("RED-002",),
        prefix=("CC-029", "DIA-015"),
        aggregate=("CC-033",),
        permission_fact=("CC-025",),
        permission_where=("CC-027",),
        cancellation=("CC-024",),
        failed_output=("CC-023",),
        completed=("CC-012", "CC-013"),
        outcome={"process": ("CC-016",), "query-run": ("CC-020",), "query-start": ("CC-032",), "teardown": ("CC-037",)},
        category={
            "query-run": ("CC-007", "CC-009", "CC-014", "CC-018", "CC-019", "CC-022"),
            "process": ("CC-016",),
            "query-start": ("CC-031",),
            "teardown": ("CC-037", "CC-041"),
        },
        idempotent=("CC-038",),
        teardown=("CC-037",),
        independent=("CC-040",),
        cleanup_startup=("CC-034",),
        cleanup_dispose=("CC-039",),
        launch=("CC-044",),
        concurrency=("CC-042",),
    ),
    "codex": Owners(
        area="codex",
        stderr=("CDX-041", "RED-006"),
        grammar=("CDX-072", "RED-002"),
        prefix=("DIA-015",),
        aggregate=("CDX-063",),
        permission_fact=("CDX-036",),
        permission_where=("CDX-043",),
        cancellation=("CDX-016",),
        failed_output=("CDX-014",),
        completed=("CDX-018", "CDX-015", "CDX-019", "CDX-020", "CDX-048"),
        outcome={
            "process": ("CDX-044",),
            "turn": ("CDX-045",),
            "turn-start": ("CDX-045",),
            "initialize": ("CDX-062",),
            "thread-start": ("CDX-062",),
            "teardown": ("CDX-067",),
        },
        category={
            "turn": (
                "CDX-013",
                "CDX-006",
                "CDX-007",
                "CDX-008",
                "CDX-012",
                "CDX-021",
                "CDX-022",
                "CDX-025",
                "CDX-026",
                "CDX-033",
                "CDX-034",
                "CDX-046",
            ),
            "turn-start": ("CDX-010", "CDX-027", "CDX-029", "CDX-030"),
            "process": ("CDX-044", "CDX-047"),
            "initialize": ("CDX-061",),
            "thread-start": ("CDX-061", "CDX-055", "CDX-056"),
            "teardown": ("CDX-067",),
        },
        idempotent=("CDX-068",),
        teardown=("CDX-067",),
        independent=("CDX-070",),
        cleanup_startup=("CDX-065",),
        cleanup_dispose=("CDX-069",),
        launch=("CDX-052",),
        concurrency=("CDX-071",),
        stage=("CDX-010",),
    ),
}


def pick(candidates: Sequence[str], covers: Iterable[str]) -> tuple[str, ...]:
    """The candidates the scenario covers, else the first (the general rule)."""
    chosen = tuple(c for c in candidates if c in set(covers))
    return chosen or (candidates[0],)


# The rules of start() besides the table's: admission, cancellation, publication.
STARTUP_RULES = {
    "claude-code": ("CC-035", "CC-031", "CC-033"),
    "codex": ("CDX-059", "CDX-064", "CDX-055", "CDX-056", "CDX-061", "CDX-063"),
}


# A process exit reported where something else decided the run first breaks the rule that the
# earlier decision wins: by the expected stage, the rule (and the narrower ones a scenario covers).
EXIT_LOSES = {
    "query-run": ("CC-017", "CC-018", "CC-019"),
    "turn": ("CDX-045",),
    "turn-start": ("CDX-045",),
    "initialize": ("CDX-061",),
    "thread-start": ("CDX-061",),
    "query-start": ("CC-031",),
}
