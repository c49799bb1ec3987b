"""Exact blame for the process tier and the recording replays: which requirement a difference shows.

A run outcome (start, result, dispose) is compared part by part with the one the spec renders
for the scenario; a part that differs is diagnosed down to the fact that differs, and the fact
names its requirement:

- a provider text that is no sentence of its grammar root: the source that leaked into it
  (stderr bytes the fake wrote: RED-006, and CDX-041 for Codex; a planted canary or marker:
  RED-008), else the grammar rule itself (RED-002, and CDX-072 for Codex);
- a sentence with other facts: the field that differs (stage and category: the rule the
  expected category comes from; exit code and signal: the rule for the process outcome at
  the expected stage; the HTTP status: CDX-004), a permission line that is missing, extra or
  different, a missing product prefix or aggregate part;
- the other result fields (stop reason, output, a diagnostic that must not be there) and the
  dispose() settlements (a second call that differs from the first: idempotency).

The owners (conformance/process/owners.py) are the rules of the requirement texts; where several
rules can yield one expected category (``unknown`` has many causes), the scenario's own
``covers`` pick among them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.areas.diagnostic.grammar import Matcher, roots
from conformance.areas.diagnostic.oracle import AGGREGATE_SEPARATOR
from conformance.process.owners import EXIT_LOSES, OWNERS, STARTUP_RULES, Owners, pick
from conformance.spec import Spec

Json = Any
MARKERS = ("SECRET", "/private/", "FAULT-")  # no sentence of the grammar contains any (case-insensitive)


@dataclass(frozen=True)
class Problem:
    """One difference, and the requirement(s) it demonstrates."""

    requirements: tuple[str, ...]
    message: str
    # What the rule wanted and what was found, where the difference is not in the outcome (a
    # frame or reply on the wire): a failure whose outcomes are equal shows these instead.
    values: tuple[Any, Any] | None = None


@dataclass
class Context:
    """What a diagnosis knows of the run: its product, what its scenario covers, what was planted,
    and what the product wrote on stdout and stderr."""

    spec: Spec
    product: str
    covers: tuple[str, ...] = ()
    planted: list[str] = field(default_factory=list)
    stderr: str = ""
    stdout: str = ""

    @property
    def owners(self) -> Owners:
        return OWNERS[self.product]

    def label(self) -> str:
        [row] = [r for r in self.spec.table("diagnostic", "products").rows if r["area"] == self.product]
        return str(row["product"])

    def error_prefix(self) -> str:
        [row] = [r for r in self.spec.table("diagnostic", "products").rows if r["area"] == self.product]
        return str(row["error_prefix"])

    def sentence(self, kind: str, text: str) -> bool:
        return grammar(self.spec, self.label(), kind).matches(text)


_GRAMMARS: dict[int, dict[tuple[str, str], Matcher]] = {}


def grammar(spec: Spec, product_label: str, kind: str) -> Matcher:
    """The grammar root of a product's text kind, compiled once per spec."""
    if id(spec) not in _GRAMMARS:
        _GRAMMARS[id(spec)] = roots(spec)
    return _GRAMMARS[id(spec)][(product_label, kind)]


# --------------------------------------------------------------------------- texts


_LINE = re.compile(r"^(?P<head>[^()]*)\((?P<fields>[^()]*)\)(?P<tail>.*)$", re.DOTALL)


def line_fields(line: str) -> dict[str, str]:
    """The "label: value" fields of a failure or permission line (a sentence of the grammar)."""
    match = _LINE.match(line)
    if match is None:
        return {}
    found = {}
    for part in match["fields"].split("; "):
        label, _, value = part.partition(": ")
        found[label] = value
    return found


def leaked(ctx: Context, text: str, expected: str) -> list[Problem]:
    """What of the run's raw material is in ``text`` and not in ``expected``."""
    stderr_lines = [s.strip() for s in ctx.stderr.splitlines() if len(s.strip()) >= 6]
    if ctx.stderr.strip():
        stderr_lines.append(ctx.stderr.strip()[-40:])
    from_stderr = [s for s in stderr_lines if s in text and s not in expected and s not in ctx.stdout]
    if from_stderr:
        return [Problem(ctx.owners.stderr, f"bytes of the product's stderr are in the text: {from_stderr[0]!r}")]
    lowered = text.lower()
    canaries = [c for c in [*MARKERS, *ctx.planted] if len(c) >= 4 and c.lower() in lowered]
    if canaries:
        return [Problem(("RED-008",), f"a planted canary or marker is in the text: {canaries[0]!r}")]
    return []


def text_problems(ctx: Context, kind: str, expected: str, actual: Json) -> list[Problem]:
    """Why the provider text ``actual`` of grammar ``kind`` is not ``expected``."""
    if not isinstance(actual, str):
        return [Problem(ctx.owners.grammar, f"the {kind} text is not a string: {actual!r}")]
    if not ctx.sentence(kind, actual):
        return leaked(ctx, actual, expected) or [
            Problem(ctx.owners.grammar, f"the {kind} text is no sentence of the grammar")
        ]
    if kind == "run-result":
        return diagnostic_problems(ctx, expected, actual)
    prefix = ctx.error_prefix()
    want = [p if i == 0 else prefix + p for i, p in enumerate(expected.split(AGGREGATE_SEPARATOR + prefix))]
    got = [p if i == 0 else prefix + p for i, p in enumerate(actual.split(AGGREGATE_SEPARATOR + prefix))]
    if len(want) != len(got):
        return [Problem(ctx.owners.aggregate, f"{len(want)} text(s) expected in the rejection, got {len(got)}")]
    problems = []
    for e, a in zip(want, got, strict=True):
        if e != a:
            if not a.startswith(prefix) or "\n" in a:
                problems.append(Problem(ctx.owners.prefix, "the rejection is not the prefix plus one failure line"))
            else:
                problems += line_problems(ctx, e[len(prefix) :], a[len(prefix) :])
    return problems


def diagnostic_problems(ctx: Context, expected: str, actual: str) -> list[Problem]:
    """A run-result diagnostic: the failure line, then the permission line if any."""
    failure, _, permission = expected.partition("\n")
    got_failure, _, got_permission = actual.partition("\n")
    problems = line_problems(ctx, failure, got_failure) if failure != got_failure else []
    if permission != got_permission:
        if not permission:
            problems.append(Problem(ctx.owners.permission_where, "a permission line where none belongs"))
        else:
            problems.append(Problem(ctx.owners.permission_fact, "the permission line is missing or another one"))
    return problems


def line_problems(ctx: Context, expected: str, actual: str) -> list[Problem]:
    """Two failure lines, field by field (table diagnostic.failure_line_fields)."""
    want, got = line_fields(expected), line_fields(actual)
    stage = want.get("stage", "")
    problems = []
    if want.get("product") != got.get("product"):
        problems.append(Problem(("DIA-001",), f"product {got.get('product')!r}, not {want.get('product')!r}"))
    if (want.get("stage"), want.get("category")) != (got.get("stage"), got.get("category")):
        owner = category_owner(ctx, stage, want.get("category", ""))
        if got.get("category") == "process-exit" and stage in EXIT_LOSES:
            owner = pick(EXIT_LOSES[stage], ctx.covers)  # the exit beat what decided the run first
        elif want.get("category") == got.get("category") and ctx.owners.stage:
            owner = ctx.owners.stage  # the right category at another stage: the line names another operation
        problems.append(
            Problem(
                owner,
                f"stage {got.get('stage')!r} and category {got.get('category')!r}, not {stage!r} and "
                f"{want.get('category')!r}",
            )
        )
    if want.get("HTTP status") != got.get("HTTP status"):
        problems.append(Problem(("CDX-004",), f"HTTP status {got.get('HTTP status')}, not {want.get('HTTP status')}"))
    if (want.get("exit code"), want.get("signal")) != (got.get("exit code"), got.get("signal")):
        problems.append(
            Problem(
                pick(ctx.owners.outcome.get(stage, ctx.owners.grammar), ctx.covers),
                f"the line shows {_outcome(got)}, the spec {_outcome(want)} (stage {stage})",
            )
        )
    return problems or [Problem(ctx.owners.grammar, "the line differs")]


def _outcome(fields: dict[str, str]) -> str:
    shown = [f"{label} {fields[label]}" for label in ("exit code", "signal") if label in fields]
    return " and ".join(shown) or "no exit code and no signal"


def category_owner(ctx: Context, stage: str, category: str) -> tuple[str, ...]:
    """The rule an expected (stage, category) comes from."""
    if ctx.product == "claude-code" and stage == "query-run":
        if category in ctx.spec.vocabulary("claude-code.error_subtype").values:
            return ("CC-008",)
        special = {"invalid-success": ("CC-011",), "missing-result": ("CC-015",)}
        if category in special:
            return special[category]
    if ctx.product == "codex" and stage == "turn":
        rows = {r["variant"]: r for r in ctx.spec.table("codex", "variants").rows}
        if category in rows:
            return ("CDX-002",) if rows[category]["kind"] == "string" else ("CDX-003",)
    if ctx.product == "codex" and stage == "process" and category == "process-exit":
        return ("CDX-044",)
    return pick(ctx.owners.category.get(stage, ctx.owners.grammar), ctx.covers)


# --------------------------------------------------------------------------- outcome parts


def result_problems(ctx: Context, expected: Json, actual: Json) -> list[Problem]:
    """A SubagentResult against the one the spec renders (None: start() rejected)."""
    owners = ctx.owners
    if expected is None or actual is None:
        return [
            Problem(
                owners.cancellation if expected is None else owners.failed_output,
                "a result where none belongs" if expected is None else "no result",
            )
        ]
    stop = expected["stopReason"]
    problems = []
    if actual.get("stopReason") != stop:
        if "aborted" in (stop, actual.get("stopReason")):
            problems.append(Problem(owners.cancellation, f"stop reason {actual.get('stopReason')!r}, not {stop!r}"))
        elif stop == "completed":
            problems.append(Problem(pick(owners.completed, ctx.covers), f"stop reason {actual.get('stopReason')!r}"))
        elif "diagnostic" in expected and "diagnostic" in actual and expected["diagnostic"] != actual["diagnostic"]:
            pass  # the diagnostic's facts say why
        else:
            problems.append(
                Problem(
                    ("CDX-011",) if ctx.product == "codex" else owners.failed_output,
                    f"stop reason {actual.get('stopReason')!r}, not {stop!r}",
                )
            )
    if actual.get("output") != expected["output"]:
        owner = owners.cancellation if stop == "aborted" else owners.failed_output
        if stop == "completed":
            owner = pick(owners.completed, ctx.covers)
        problems.append(Problem(owner, "the output differs"))
    if "diagnostic" in expected and "diagnostic" in actual:
        if actual["diagnostic"] != expected["diagnostic"]:
            problems += text_problems(ctx, "run-result", expected["diagnostic"], actual["diagnostic"])
    elif "diagnostic" in expected:
        problems.append(Problem(owners.failed_output, "no diagnostic on a failed result"))
    elif "diagnostic" in actual:
        owner = owners.cancellation if stop == "aborted" else pick(owners.completed, ctx.covers)
        problems.append(Problem((*owner, "DIA-014"), f"a diagnostic on a {stop} result"))
    extra = sorted(set(actual) - set(expected) - {"diagnostic"})
    if extra and not problems:
        problems.append(Problem(owners.failed_output, f"unexpected result fields {extra}"))
    return problems


def start_problems(ctx: Context, expected: Json, actual: Json, table_requirements: Sequence[str]) -> list[Problem]:
    """A start() settlement against the one of table startup_rejections: a plain text is the
    table's (and the admission or cancellation rule the scenario covers), a line is diagnosed."""
    table = pick([*STARTUP_RULES.get(ctx.product, ()), *table_requirements], ctx.covers)
    if not set(table) & set(ctx.covers):
        table = tuple(table_requirements)
    if "rejected" in expected and isinstance(actual, dict) and "rejected" in actual:
        if not line_fields(expected["rejected"]):  # a plain text of the table
            return [Problem(table, "start() rejected with another text than the row's plain text")]
        return text_problems(ctx, "start-rejection", expected["rejected"], actual["rejected"])
    return [Problem(table, f"start() settled {actual!r}, not {expected!r}")]


def dispose_problems(ctx: Context, expected: list[Json], actual: Json) -> list[Problem]:
    """The two dispose() settlements: each as the spec renders, and the second as the first."""
    owners = ctx.owners
    if not isinstance(actual, list) or len(actual) != len(expected):
        return [Problem(owners.idempotent, f"{len(expected)} dispose() settlement(s) expected, got {actual!r}")]
    problems: list[Problem] = []
    if len(actual) > 1 and actual[1] != actual[0]:
        problems.append(Problem(owners.idempotent, "the second dispose() settled otherwise than the first"))
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        if want == got or (index and problems):
            continue
        if "rejected" in want and "rejected" in got:
            problems += text_problems(ctx, "dispose-rejection", want["rejected"], got["rejected"])
        elif "rejected" in got:
            problems.append(Problem(owners.independent, "dispose() rejected where it must resolve"))
        else:
            problems.append(Problem(owners.teardown, "dispose() resolved where it must reject"))
    return problems


def outcome_problems(
    ctx: Context, allowed: dict[str, list[Json]], outcome: Json, table_requirements: Sequence[str]
) -> list[Problem]:
    """Every part of ``outcome`` that no allowed option matches, diagnosed against the nearest option.
    A start() that published where it must reject, or rejected where it must publish, decides the
    other parts (no result and no dispose() after a rejection): they are not diagnosed again, except
    that a failure the published run had to show names its own rule too."""
    problems: list[Problem] = []
    got_start = outcome.get("start") if isinstance(outcome, dict) else None
    if got_start not in allowed["start"] and all(_published(w) != _published(got_start) for w in allowed["start"]):
        problems += start_problems(ctx, allowed["start"][0], got_start, table_requirements)
        for want in allowed["result"][:1]:
            if isinstance(want, dict) and "diagnostic" in want:
                failure = line_fields(want["diagnostic"].partition("\n")[0])
                owner = category_owner(ctx, failure.get("stage", ""), failure.get("category", ""))
                problems.append(Problem(owner, "the run was never published, so it never showed its failure"))
        return problems
    for key, options in allowed.items():
        got = outcome.get(key) if isinstance(outcome, dict) else None
        if got in options:
            continue
        found: list[list[Problem]] = []
        for want in options:
            if key == "start":
                found.append(start_problems(ctx, want, got, table_requirements))
            elif key == "result":
                found.append(result_problems(ctx, want, got))
            else:
                found.append(dispose_problems(ctx, want, got))
        nearest = sorted(found, key=len)[0] if found else []
        problems += nearest or [Problem(ctx.owners.grammar, f"{key} differs")]
    return problems


def _published(start: Json) -> bool:
    return isinstance(start, dict) and start.get("published") is True


def blamed(problems: Iterable[Problem]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r for p in problems for r in p.requirements))
