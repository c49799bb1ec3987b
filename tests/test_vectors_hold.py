"""Every "its vectors hold" requirement is violated when, and only when, one of its vectors fails
(issue #28, item 4), whichever operation the failing answer came from.

The requirements are found in the spec's data, not listed here: those whose text reads "For
every row of table `T`" for a golden-vector table T (``*_vectors``). Each is checked against
adapters that misread the vectors, one table and a set of operations at a time: for every row
with a partner (a row of the same shape whose stated answers all differ), the mutated
operations answer the partner's question instead of the row's (in whatever request carries the
row's input, so that one operation asked along the way, job_outcome inside a completion vector,
misreads it consistently with the one the row states). Where a mutated operation is one the row
states, each such row's test must fail and charge the requirement (as the rule or as its
consequence), and every other row's test must pass; where only operations the row does not state
are mutated, no test may charge it. The operations a table's rows state are the exec tests'
``VECTOR_CALLS``; those asked along the way, ``ASKED_ALONG`` below.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import Spec, load_spec
from conformance.spec.resources import PACKAGE
from conformance.test_adapter_protocol import VECTOR_CALLS
from tests.conftest import RunSuite

Json = dict[str, Any]
_SPEC = load_spec()
_HOLDS = re.compile(r"^\s*For every row of table `(\w+_vectors)`")

# Each vector table's test: its module's tier and its name.
VECTOR_TESTS = {
    ("selection", "golden_vectors"): ("selection", "test_golden_vector"),
    ("results", "settle_vectors"): ("results", "test_settle_vector"),
    ("results", "render_vectors"): ("results", "test_render_vector"),
    ("background", "job_vectors"): ("background", "test_job_vector"),
    ("background", "completion_vectors"): ("background", "test_job_notice_vector"),
    ("background", "notice_vectors"): ("background", "test_notice_vector"),
}

# Operations a vector's test asks although the row states no answer of theirs, with the part of
# the row their request carries: a Job vector's test asks job_notice of the row's input (BGD-017's
# check), a completion vector's asks job_outcome of the settled input when the notice differs.
ASKED_ALONG: dict[tuple[str, str], dict[str, Callable[[Json], Any]]] = {
    ("background", "job_vectors"): {"job_notice": lambda row: row["input"]},
    ("background", "completion_vectors"): {"job_outcome": lambda row: row["input"]["settled"]},
}


def holds_requirements(spec: Spec) -> dict[tuple[str, str], str]:
    """(area, table) -> the requirement whose rule is that the table's vectors hold."""
    found = {}
    for name, area in spec.areas.items():
        for req in area.requirements:
            match = _HOLDS.match(req.text)
            if match and match.group(1) in area.tables and req.level == "MUST":
                found[(name, match.group(1))] = req.id
    return found


HOLDS = holds_requirements(_SPEC)


def test_every_vectors_hold_requirement_is_audited() -> None:
    """A new "vectors hold" requirement gets its test here (VECTOR_TESTS), and its stated calls
    in VECTOR_CALLS; the requirement is its table's own."""
    assert set(HOLDS) == set(VECTOR_TESTS), sorted(set(HOLDS) ^ set(VECTOR_TESTS))
    stated = {(c.area, c.table) for c in VECTOR_CALLS}
    assert set(HOLDS) <= stated, sorted(set(HOLDS) - stated)
    for (area, table), rid in HOLDS.items():
        assert _SPEC.table(area, table).requirements == (rid,), (area, table)


def _stated(area: str, table: str) -> dict[str, tuple[Callable[[Json], Any], Callable[[Json], Any]]]:
    """op -> (its request for a row, the answer the row states; None: only the last value)."""
    return {c.op: (c.input, c.output) for c in VECTOR_CALLS if (c.area, c.table) == (area, table)}


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _shape(area: str, table: str, row: Json, op: str) -> Any:
    """Rows whose questions to ``op`` may stand for each other: a selection vector's steps only for
    steps that are events alike (a fold of any binding is defined over events of another's), of its
    own binding for select_output, and as many for fold_output (which answers one value per step)."""
    if (area, table) == ("selection", "golden_vectors"):
        events = all("event" in s for s in row["steps"])
        return (events, len(row["steps"])) if op == "fold_output" else (events, row["binding"])
    return None


def partners(area: str, table: str, op: str) -> dict[int, int]:
    """Each row -> a row whose question to ``op`` is of its shape and whose every stated answer
    differs from its own."""
    rows = _SPEC.table(area, table).rows
    stated = _stated(area, table)

    def answers(row: Json) -> list[str]:
        return [_key(out(row) if out(row) is not None else row.get("expected")) for _, out in stated.values()]

    found = {}
    for i, row in enumerate(rows):
        # a row of its own binding first, where the table has bindings
        for j, other in sorted(enumerate(rows), key=lambda jr: jr[1].get("binding") != row.get("binding")):
            same_shape = i != j and _shape(area, table, row, op) == _shape(area, table, other, op)
            if same_shape and all(a != b for a, b in zip(answers(row), answers(other), strict=True)):
                found[i] = j
                break
    return found


@dataclass(frozen=True)
class Case:
    area: str
    table: str
    mutated: tuple[str, ...]  # the operations that misread the rows

    @property
    def states(self) -> bool:
        """Whether a mutated operation is one whose answer the rows state."""
        return any(op in _stated(self.area, self.table) for op in self.mutated)

    def misreadings(self) -> dict[str, dict[str, Any]]:
        """op -> {a row's request part (as JSON text): the partner's}, for every mutated op."""
        rows = _SPEC.table(self.area, self.table).rows
        cores = {op: fn for op, (fn, _) in _stated(self.area, self.table).items()}
        cores.update(ASKED_ALONG.get((self.area, self.table), {}))
        out: dict[str, dict[str, Any]] = {}
        for op in self.mutated:
            swaps: dict[str, Any] = {}
            for i, j in partners(self.area, self.table, op).items():
                mine, theirs = cores[op](rows[i]), cores[op](rows[j])
                if mine is not None and theirs is not None:
                    swaps.setdefault(_key(mine), theirs)
            out[op] = swaps
        return out


def _cases() -> list[Any]:
    params = []
    for area, table in VECTOR_TESTS:
        stated = list(_stated(area, table))
        along = list(ASKED_ALONG.get((area, table), {}))
        # Each stated operation alone; with those asked along, all of them at once (the failing
        # answer then comes from the operation asked along); those asked along alone never charge it.
        subsets = [(op,) for op in stated] + ([tuple(stated + along)] if along else [])
        subsets += [(op,) for op in along]
        params += [pytest.param(Case(area, table, s), id=f"{table}-{'+'.join(s)}") for s in subsets]
    return params


MUTANT = '''
"""The reference, but {ops} answer another vector's question (tests/test_vectors_hold.py)."""
import json
import reference_impl

globals().update({{name: getattr(reference_impl, name) for name in reference_impl.__all__}})
_SWAPS = json.loads({swaps!r})


def _key(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _misread(value, swaps):
    key = _key(value)
    if key in swaps:
        return json.loads(json.dumps(swaps[key]))
    if isinstance(value, dict):
        return {{k: _misread(v, swaps) for k, v in value.items()}}
    if isinstance(value, list):
        return [_misread(v, swaps) for v in value]
    return value


def _wrap(op):
    real = getattr(reference_impl, op)
    return lambda request: real(_misread(request, _SWAPS[op]))


for _op in _SWAPS:
    globals()[_op] = _wrap(_op)
'''


@pytest.mark.parametrize("case", _cases())
def test_vectors_hold_is_charged_exactly_when_a_vector_fails(case: Case, tmp_path: Path, run_suite: RunSuite) -> None:
    rid = HOLDS[(case.area, case.table)]
    tier, test = VECTOR_TESTS[(case.area, case.table)]
    swaps = case.misreadings()
    assert all(swaps.values()), f"no row of {case.table} has a partner to misread it as"
    name = f"misreads_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(MUTANT.format(ops=", ".join(case.mutated), swaps=json.dumps(swaps)))
    run = run_suite(f"--requirement={rid}", str(PACKAGE / f"test_{tier}.py"), impl=name, report=True)
    rows = _SPEC.table(case.area, case.table).rows
    stated = _stated(case.area, case.table)
    misread = {  # the rows a mutated operation the rows state is asked about
        str(rows[i]["name"])
        for op in case.mutated
        if op in stated
        for i, j in partners(case.area, case.table, op).items()
        if None not in (stated[op][0](rows[i]), stated[op][0](rows[j]))
    }
    tests = [t for t in run.report["tests"] if f"::{test}[" in t["nodeid"]]
    assert len(tests) == len(rows), run.tail
    status = {r["id"]: r["status"] for r in run.report["requirements"]}
    charged = [t["nodeid"] for t in run.report["tests"] if rid in t.get("blamed", ())]
    if not case.states:  # the rows' stated answers are right: the vectors hold
        assert not charged and status[rid] != "violated", (charged, run.tail)
        return
    for entry in tests:
        row = entry["nodeid"].split("[", 1)[1].rstrip("]")
        if row in misread:
            assert entry["outcome"] == "failed" and rid in entry.get("blamed", ()), (row, entry, run.tail)
        else:
            assert entry["outcome"] == "passed", (row, entry)
    assert status[rid] == "violated", run.tail


def test_every_vector_is_misread_by_some_case() -> None:
    """The audit misreads every vector but two text-stream ones (a text-stream vector has no
    select_output question, and its fold can stand only for another of as many text steps): the
    one of no steps, whose only answer is [], and the one whose step count no other shares."""
    never = []
    for area, table in VECTOR_TESTS:
        rows = _SPEC.table(area, table).rows
        stated = _stated(area, table)
        hit = {i for op, (core, _) in stated.items() for i, j in partners(area, table, op).items() if core(rows[i])}
        never += [str(row["name"]) for i, row in enumerate(rows) if i not in hit]
    assert never == ["text-non-ascii-is-kept-exactly", "text-no-steps-select-null"], never
