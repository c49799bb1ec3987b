"""The oracles of format_diagnostic and bound_diagnostic, built from spec/diagnostic.yaml and
the product files' stage and permission tables (their inputs are drawn by
conformance/areas/diagnostic/strategies.py).

The oracles read the spec: the failure line's fields, their order and when each is printed
come from table ``failure_line_fields``; prefixes and the HTTP-status flag from table
``products``; stages, categories and permission rows from the product files; the 4096-byte
limit and the truncation marker from the ``bound_vectors`` rows. Nothing here restates a
line: the tests check shape against the grammar and content against these tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.spec import expand_text

Json = dict[str, Any]

# Which key of the facts (diagnostic.yaml, line_vectors description) holds the value of each
# field of table failure_line_fields. A label the table adds must be added here, or the
# oracle fails loudly instead of silently ignoring the field.
FACT_KEYS = {
    "product": "product",
    "stage": "stage",
    "category": "category",
    "HTTP status": "httpStatus",
    "exit code": "exitCode",
    "signal": "signal",
}
# DIA-008: the HTTP status follows only a category of this vocabulary.
HTTP_STATUS_VARIANTS = "codex.http_status_variant"
# The separators the composition requirements name: DIA-012 (failure line, then one "\n" and
# the permission line) and DIA-016 (startup text, "; ", teardown text).
PERMISSION_SEPARATOR = "\n"
AGGREGATE_SEPARATOR = "; "
SURFACES = ("run-result", "start-rejection", "dispose-rejection")


# ---------------------------------------------------------------- products and their tables


@dataclass(frozen=True)
class Product:
    """One row of diagnostic.products: the label, the area owning its tables, its prefix."""

    label: str
    area: str
    error_prefix: str
    http_status: bool


def products(spec: Any) -> list[Product]:
    return [
        Product(row["product"], row["area"], row["error_prefix"], row["http_status"])
        for row in spec.table("diagnostic", "products").rows
    ]


def product(spec: Any, label: str) -> Product:
    [found] = [p for p in products(spec) if p.label == label]
    return found


def stage_categories(spec: Any, label: str, surface: str | None = None) -> list[tuple[str, str]]:
    """Every (stage, category) the product's stages table allows, optionally only for stages
    whose failure surfaces in ``surface``."""
    return [
        (row["stage"], category)
        for row in spec.table(product(spec, label).area, "stages").rows
        if surface is None or surface in row["surfaces_in"]
        for category in row["categories"]
    ]


def startup_and_teardown(spec: Any, label: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The pairs a start() rejection's first text can carry (stages surfacing only in
    start-rejection) and those of a teardown text (stages that also surface in dispose())."""
    startup, teardown = [], []
    for row in spec.table(product(spec, label).area, "stages").rows:
        pairs = [(row["stage"], category) for category in row["categories"]]
        if "dispose-rejection" in row["surfaces_in"]:
            teardown += pairs
        elif "start-rejection" in row["surfaces_in"]:
            startup += pairs
    return startup, teardown


def carries_http_status(spec: Any, label: str, category: str) -> bool:
    """Whether a failure of this product and category can carry an HTTP status at all: the
    input domain of format_diagnostic (DIA-008) holds a status only where extraction yields one."""
    return product(spec, label).http_status and category in spec.vocabulary(HTTP_STATUS_VARIANTS).values


# ---------------------------------------------------------------- the failure-line oracle


def _written(value: Any) -> str:
    """A value as the line writes it: integers in canonical decimal, names verbatim."""
    return value if isinstance(value, str) else str(int(value))


def expected_fields(spec: Any, label: str, failure: Json) -> list[tuple[str, str]]:
    """The (label, value) fields of a failure line, in table order, from failure_line_fields."""
    facts = {"product": label, **failure}
    table = sorted(spec.table("diagnostic", "failure_line_fields").rows, key=lambda row: row["order"])
    unknown = {row["label"] for row in table} - set(FACT_KEYS)
    assert not unknown, f"conformance.areas.diagnostic.oracle.FACT_KEYS does not map the fields {sorted(unknown)}"
    fields = []
    for row in table:
        if label not in row["products"]:
            continue
        value = facts.get(FACT_KEYS[row["label"]])
        if row["optional"] and value is None:
            continue
        fields.append((row["label"], _written(value)))
    return fields


def line_fields(line: str) -> list[tuple[str, str]] | None:
    """Split a failure line "<head> (<label>: <value>; ...)" into its fields; None if not so framed."""
    _, open_paren, rest = line.partition("(")
    if not open_paren or not rest.endswith(")"):
        return None
    fields = []
    for part in rest[:-1].split("; "):
        name, colon, value = part.partition(": ")
        if not colon:
            return None
        fields.append((name, value))
    return fields


def in_order(text: str, parts: Sequence[str]) -> bool:
    """Whether ``parts`` occur in ``text`` one after another, without overlapping."""
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


# ---------------------------------------------------------------- snapshots

# Inputs only: what the snapshot of one (stage, category) pair shows the line doing with
# each kind of observed fact. The expected texts are the committed snapshots.
SNAPSHOT_VARIANTS: dict[str, Json] = {
    "bare": {},
    "HTTP status 503, exit code null": {"httpStatus": 503, "exitCode": None},
    "exit code 0": {"exitCode": 0},
    "exit code 137, SIGKILL": {"exitCode": 137, "signal": "SIGKILL"},
    "exit code null, SIGABRT": {"exitCode": None, "signal": "SIGABRT"},
}


def snapshot_cases(spec: Any) -> list[tuple[str, str, str, str]]:
    """(id, product, stage, category) for every pair each product's stages table allows."""
    return [
        (f"{p.area}-{stage}-{category}", p.label, stage, category)
        for p in products(spec)
        for stage, category in stage_categories(spec, p.label)
    ]


def snapshot_requests(spec: Any, label: str, stage: str, category: str) -> dict[str, Json]:
    """The format_diagnostic inputs of one pair, for every surface its stage appears in."""
    row = next(r for r in spec.table(product(spec, label).area, "stages").rows if r["stage"] == stage)
    startup, _ = startup_and_teardown(spec, label)
    requests = {}
    for surface in (s for s in SURFACES if s in row["surfaces_in"]):
        for name, extra in SNAPSHOT_VARIANTS.items():
            if "httpStatus" in extra and not carries_http_status(spec, label, category):
                continue  # outside the input domain: no provider extracts a status here (DIA-008)
            failure = {"stage": stage, "category": category, **extra}
            if surface == "run-result":
                facts: Json = {"product": label, **failure}
            elif surface == "start-rejection" and (stage, category) not in startup:
                first_stage, first_category = startup[0]  # a teardown text follows a startup text
                facts = {"product": label, "failures": [{"stage": first_stage, "category": first_category}, failure]}
            else:
                facts = {"product": label, "failures": [failure]}
            requests[f"{surface}: {name}"] = {"kind": surface, "facts": facts}
    return requests


# ---------------------------------------------------------------- the bound


@dataclass(frozen=True)
class Bound:
    """The limit and marker of DIA-019/DIA-020, as the bound_vectors rows fix them."""

    limit: int
    marker: str

    @property
    def budget(self) -> int:
        """Bytes of the input a cut text keeps at most."""
        return self.limit - len(self.marker.encode("utf-8"))

    def expected(self, text: str) -> str:
        """The longest code-point prefix that fits the budget, then the marker (an oracle
        that walks code points, not bytes, so it shares no code with a byte-level cut)."""
        if len(text.encode("utf-8")) <= self.limit:
            return text
        size = kept = 0
        for char in text:
            size += len(char.encode("utf-8"))
            if size > self.budget:
                break
            kept += 1
        return text[:kept] + self.marker


_BOUNDS: dict[int, tuple[Any, Bound]] = {}  # by id, with the spec itself: an id is not reused while it is held


def bound(spec: Any) -> Bound:
    """Read the limit (the largest input a vector keeps unchanged, below the smallest it cuts)
    and the marker (what a cut vector appends after the kept prefix) from bound_vectors, once
    per spec (the vectors' texts run to kilobytes)."""
    cached = _BOUNDS.get(id(spec))
    if cached is None or cached[0] is not spec:
        cached = _BOUNDS[id(spec)] = (spec, _read_bound(spec))
    return cached[1]


def _read_bound(spec: Any) -> Bound:
    kept, cut, markers = [], [], set()
    for row in spec.table("diagnostic", "bound_vectors").rows:
        given, expected = expand_text(row["input"]), expand_text(row["expected"])
        if given == expected:
            kept.append(row["input_bytes"])
        else:
            cut.append(row["input_bytes"])
            same = next((i for i, (a, b) in enumerate(zip(given, expected, strict=False)) if a != b), len(expected))
            markers.add(expected[same:])
    assert kept and cut and max(kept) < min(cut), "bound_vectors must fix the limit from both sides"
    assert len(markers) == 1, f"bound_vectors disagree on the truncation marker: {markers}"
    return Bound(max(kept), markers.pop())


# ---------------------------------------------------------------- the whole-text oracle


def expected_line(spec: Any, label: str, failure: Json) -> str:
    """The failure line of ``failure``, from table failure_line_fields (DIA-002)."""
    fields = expected_fields(spec, label, failure)
    return "Product subagent failure (" + AGGREGATE_SEPARATOR.join(f"{k}: {v}" for k, v in fields) + ")"


def expected_permission_line(label: str, permission: Json) -> str:
    """The permission line of DIA-011."""
    return (
        f"{label} unattended decision (mode: {permission['mode']}; request: {permission['request']}; "
        f"decision: {permission['decision']}): {permission['reason']}"
    )


def expected_text(spec: Any, request: Json) -> str:
    """What format_diagnostic must write for ``request``: the lines of DIA-002 and DIA-011,
    composed as DIA-012, DIA-015 and DIA-016 say."""
    kind, facts = request["kind"], request["facts"]
    label = facts["product"]
    failure = {k: v for k, v in facts.items() if k not in ("product", "permission")}
    if kind == "permission-line":
        return expected_permission_line(label, facts)
    if kind == "failure-line":
        return expected_line(spec, label, failure)
    if kind == "run-result":
        line = expected_line(spec, label, failure)
        if "permission" in facts:
            line += PERMISSION_SEPARATOR + expected_permission_line(label, facts["permission"])
        return line
    prefix = product(spec, label).error_prefix
    return AGGREGATE_SEPARATOR.join(prefix + expected_line(spec, label, f) for f in facts["failures"])
