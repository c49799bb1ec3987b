"""Nothing caught by chance: every row of every spec table is reached in every run.

A test that exercises a table row says so with the ``reaches`` marker
(``@pytest.mark.reaches("results.one_shot_stop_reasons", 3)``: area.table and the row's index).
:func:`row_params` makes one pytest parameter per row, marked, so that a golden-vector test or a
stratified property (one that draws its row first and generates only inside it) reaches each row
deterministically, whatever the Hypothesis profile. A row that feeds the provider an observation
also reaches the redaction.structured_inputs row of that observation's read
(conformance/verdict/structured_reads.py). ``tests/test_reach.py`` collects the whole suite and lists
every row that no collected test reaches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

import pytest
from hypothesis import settings

from conformance.spec import Requirement, Spec, requirements_named
from conformance.verdict.structured_reads import implied

REACHES_MARKER = "reaches"


def row_id(row: dict[str, Any], index: int) -> str:
    """A row's test id: its ``name`` where it has one, else its index."""
    name = row.get("name")
    return str(name) if isinstance(name, str) and name else f"row{index}"


def row_params(
    spec: Spec,
    area: str,
    table: str,
    *,
    marks: Callable[[dict[str, Any]], Iterable[pytest.MarkDecorator]] = lambda row: (),
    where: Callable[[dict[str, Any]], bool] = lambda row: True,
) -> list[Any]:
    """One parameter per row of ``area.table`` (those ``where`` keeps), each marked as reaching it."""
    return [
        pytest.param(
            row,
            id=row_id(row, index),
            marks=[
                pytest.mark.reaches(f"{area}.{table}", index),
                *(pytest.mark.reaches(t, i) for t, i in implied(spec, [(f"{area}.{table}", index)])),
                *marks(row),
            ],
        )
        for index, row in enumerate(spec.table(area, table).rows)
        if where(row)
    ]


def share(parts: int, floor: int = 5) -> settings:
    """A stratified property's share of the profile's example budget (at least ``floor``), so that
    drawing the row first makes the run no slower than one property over every row."""
    return settings(max_examples=max(floor, settings().max_examples // parts))


def reached(item: pytest.Item) -> Iterator[tuple[str, int]]:
    """The (area.table, row index) pairs a collected test reaches."""
    for mark in item.iter_markers(REACHES_MARKER):
        table, *indices = mark.args
        for index in indices:
            yield str(table), int(index)


def unreached(spec: Spec, reached_rows: Iterable[tuple[str, int]]) -> list[str]:
    """Every table row no test reaches, as ``area.table[index] (name)``."""
    seen = set(reached_rows)
    out = []
    for area in spec.areas.values():
        for table in area.tables.values():
            for index, row in enumerate(table.rows):
                if (f"{area.name}.{table.name}", index) not in seen:
                    out.append(f"{area.name}.{table.name}[{index}] ({row_id(row, index)})")
    return out


# --------------------------------------------------------------------------- a requirement's branches

_HOLDS = re.compile(r"^\s*For every row of table `(\w+_vectors)`")


def holds_table(requirement: Requirement) -> str | None:
    """The golden-vector table whose rows ``requirement`` says hold ("For every row of table
    `T_vectors`"), if it is such a requirement."""
    match = _HOLDS.match(requirement.text)
    return match.group(1) if match and match.group(1) in requirement.tables else None


def branches(spec: Spec) -> dict[str, set[tuple[str, int]]]:
    """Each requirement's named branches, as (area.table, row index): every row of the golden-vector
    table it says holds; every row of any table whose own cells name it (a vector's ``covers``, a
    row's ``requirement``); and every row of a table whose rows name no requirement, for each
    requirement the table lists (its ``requirements``, or the narrower ``branches`` where the spec
    says why). An ``excluded`` requirement has no test, so it has no branches either."""
    ids = frozenset(req.id for req in spec.requirements() if req.excluded is None)
    out: dict[str, set[tuple[str, int]]] = {rid: set() for rid in sorted(ids)}
    for area in spec.areas.values():
        for name, table in area.tables.items():
            named = [requirements_named(row, ids) for row in table.rows]
            if not any(named):
                owners = table.requirements if table.branches is None else table.branches
                named = [{rid for rid in owners if rid in ids}] * len(table.rows)
            for i, rids in enumerate(named):
                for rid in rids:
                    out[rid].add((f"{area.name}.{name}", i))
        for req in area.requirements:
            if req.id in ids and (vectors := holds_table(req)) is not None:
                out[req.id].update((f"{area.name}.{vectors}", i) for i in range(len(area.tables[vectors].rows)))
    return out


def unreached_branches(
    spec: Spec, reached_by: Mapping[str, set[tuple[str, int]]], exempt: Collection[str] = ()
) -> list[str]:
    """Every branch of a requirement that no test naming it reaches (``reached_by``: requirement ->
    the rows its tests reach), as ``REQ: area.table[index] (name)``; ``exempt`` tables skipped."""
    out = []
    for rid, rows in branches(spec).items():
        for table, index in sorted(rows - reached_by.get(rid, set())):
            if table not in exempt:
                area, name = table.split(".", 1)
                out.append(f"{rid}: {table}[{index}] ({row_id(spec.table(area, name).rows[index], index)})")
    return out
