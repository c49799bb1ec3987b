"""The implementer's guide agrees with the spec: every operation of the adapter protocol has a
section that describes it (with a worked example and pitfalls where the spec has golden vectors
of it), and every pitfall is true of the golden vector it names — the vector covers the
requirement the pitfall names, expects what the pitfall says is right, and the reference answers
the same. Each check is shown to fail on a guide or a pitfall that is wrong."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reference_impl
from conformance.docs import Site, TestMap
from conformance.docs.guide import TEMPLATE, GuideError, guide_pitfalls, render_guide
from conformance.docs.pitfalls import FENCE, Pitfall, pick
from conformance.spec import Spec, load_spec
from conformance.test_adapter_protocol import VECTOR_CALLS

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "implementers-guide.md"

Call = Callable[[str, Any], Any]


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec()


@pytest.fixture(scope="module")
def guide() -> str:
    """The committed guide (tests/test_docs.py proves it is a fresh rendering)."""
    return GUIDE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pitfalls(spec: Spec) -> list[Pitfall]:
    return guide_pitfalls(spec)


def operations(spec: Spec) -> list[str]:
    """The operations of spec/schema/operations.json, which table `operations` lists too."""
    schema = json.loads((spec.root / "schema" / "operations.json").read_text(encoding="utf-8"))
    return [str(op) for op in schema["$defs"]["operation"]["enum"]]


def _vector_tables() -> dict[str, set[str]]:
    """Each operation's golden-vector tables (as the suite feeds them to it)."""
    found: dict[str, set[str]] = {}
    for call in VECTOR_CALLS:
        found.setdefault(call.op, set()).add(call.table)
    return found


# ---------------------------------------------------------------- a section per operation

_HEADING = re.compile(r"^#{2,3} (.+)$")
_EXAMPLE = re.compile(r"Worked example: vector `[^`]+` of\s+\[[^\]]+\]\([^)]*#table-([\w-]+)\)")


def sections(markdown: str) -> list[tuple[str, str]]:
    """(heading, body) of every level-2 and level-3 section, code fences skipped for headings."""
    found: list[tuple[str, list[str]]] = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            found.append((heading.group(1), []))
        elif found:
            found[-1][1].append(line)
    return [(heading, "\n".join(body)) for heading, body in found]


def missing_sections(markdown: str, ops: list[str], pitfalls: list[Pitfall]) -> list[str]:
    """What the guide lacks for each operation: a section whose heading names it and which
    describes it (the ``{{operation}}`` block); where the spec has golden vectors of it, a worked
    example from one of them and at least one pitfall."""
    tables = _vector_tables()
    problems = []
    for op in ops:
        mine = [body for heading, body in sections(markdown) if re.search(rf"\b{op}\b", heading)]
        if not mine:
            problems.append(f"{op}: no section of the guide names it in its heading")
            continue
        if not any(f"**`{op}`**" in body for body in mine):
            problems.append(f"{op}: its section does not describe it (no {{{{operation {op}}}}} block)")
        if op in tables:
            examples = {table for body in mine for table in _EXAMPLE.findall(body)}
            if not examples & tables[op]:
                problems.append(f"{op}: its section has no worked example from {sorted(tables[op])}")
            if not any(p.operation == op for p in pitfalls):
                problems.append(f"{op}: no pitfall is about it")
    return problems


def test_the_operations_are_the_schemas_and_the_tables(spec: Spec) -> None:
    table = [str(row["operation"]) for row in spec.table("adapter-protocol", "operations").rows]
    assert sorted(operations(spec)) == sorted(table)
    assert {"job_outcome", "job_output", "job_notice", "settlement_notice"} <= set(table)


def test_every_operation_has_a_guide_section(spec: Spec, guide: str, pitfalls: list[Pitfall]) -> None:
    assert missing_sections(guide, operations(spec), pitfalls) == []


def test_a_missing_section_or_example_is_caught(spec: Spec, guide: str, pitfalls: list[Pitfall]) -> None:
    ops = operations(spec)
    start = guide.index("## Background Jobs: job_notice")
    end = guide.index("\n## ", start + 1)
    without = guide[:start] + guide[end + 1 :]
    assert missing_sections(without, ops, pitfalls) == ["job_notice: no section of the guide names it in its heading"]
    no_example = guide[:start] + guide[start:end].replace("Worked example:", "An example:") + guide[end:]
    assert missing_sections(no_example, ops, pitfalls) == [
        "job_notice: its section has no worked example from ['completion_vectors']"
    ]
    others = [p for p in pitfalls if p.operation != "settlement_notice"]
    assert missing_sections(guide, ops, others) == ["settlement_notice: no pitfall is about it"]


# ---------------------------------------------------------------- every pitfall against its vector


def _reference(op: str, value: Any) -> Any:
    return getattr(reference_impl, op)(copy.deepcopy(value))


def pitfall_problems(spec: Spec, pitfall: Pitfall, call: Call = _reference) -> list[str]:
    """What is untrue of a pitfall: its vector does not cover its requirement, or expects
    something else than what it says is right at ``at``, or the reference answers otherwise, or
    the mistake it names would pass the vector."""
    where = f"pitfall of line {pitfall.line} ({pitfall.requirement}, {pitfall.table} {pitfall.vector})"
    feeds = [c for c in VECTOR_CALLS if (c.area, c.table, c.op) == (pitfall.area, pitfall.table, pitfall.operation)]
    if not feeds:
        return [f"{where}: {pitfall.area}.{pitfall.table} holds no golden vectors of {pitfall.operation}"]
    row = next((r for r in feeds[0].rows(spec) if r.get("name") == pitfall.vector), None)
    if row is None:
        return [f"{where}: no such vector"]
    problems = []
    if pitfall.requirement not in row["covers"]:
        problems.append(f"{where}: the vector covers {row['covers']}, not {pitfall.requirement}")
    right, wrong = pitfall.value(pitfall.right), pitfall.value(pitfall.wrong)
    accepted = [right, *(pitfall.value(v) for v in pitfall.also_right)]
    if wrong in accepted:
        problems.append(f"{where}: the mistake gives a right value, so the vector cannot catch it")
    expected, answer = feeds[0].output(row), call(pitfall.operation, feeds[0].input(row))
    if pitfall.operation == "fold_output":  # the vector fixes the last collected value only
        expected, answer = row["expected"], answer[-1]
    # the vector states one right answer; the reference may give a variant the pitfall names
    checks = (("the vector expects", expected, [right]), ("the reference answers", answer, accepted))
    for whose, value, allowed in checks:
        try:
            found = pick(value, pitfall.at)
        except KeyError as exc:
            problems.append(f"{where}: {whose} {exc.args[0]}")
            continue
        if found not in allowed:
            problems.append(f"{where}: {whose} {found!r} at {pitfall.at!r}, the pitfall says {right!r}")
    return problems


def test_every_pitfall_agrees_with_its_vector(spec: Spec, pitfalls: list[Pitfall]) -> None:
    assert len(pitfalls) >= 30
    problems = [problem for p in pitfalls for problem in pitfall_problems(spec, p)]
    assert problems == []


def test_every_pitfall_list_of_the_guide_is_data(guide: str, pitfalls: list[Pitfall]) -> None:
    """No pitfall is written as prose, out of the checks' reach: every "Pitfalls:" list of the
    guide is a rendered ```pitfalls block, and every pitfall of the template is in the guide."""
    template = TEMPLATE.read_text(encoding="utf-8")
    assert not [line for line in template.splitlines() if line.strip().lower().startswith("pitfalls")]
    assert guide.count("\nPitfalls:\n") == template.count(FENCE)
    flat = " ".join(guide.split())
    for p in pitfalls:
        assert f"{p.requirement}](" in flat and f"vector `{p.vector}`" in flat, p


def _pitfall(pitfalls: list[Pitfall], requirement: str, vector: str) -> Pitfall:
    return next(p for p in pitfalls if (p.requirement, p.vector) == (requirement, vector))


def test_a_pitfall_contradicting_its_vector_is_caught(spec: Spec, pitfalls: list[Pitfall]) -> None:
    killed = _pitfall(pitfalls, "BGD-003", "upstream-remote-abort-with-diagnostic")
    assert pitfall_problems(spec, killed) == []
    swapped = dataclasses.replace(killed, right=killed.wrong, wrong=killed.right)
    assert pitfall_problems(spec, swapped) == [
        f"pitfall of line {killed.line} (BGD-003, job_vectors upstream-remote-abort-with-diagnostic): "
        f"{whose} 'failed' at '/status', the pitfall says 'killed'"
        for whose in ("the vector expects", "the reference answers")
    ]
    same = dataclasses.replace(killed, wrong=killed.right)
    assert [p for p in pitfall_problems(spec, same) if "cannot catch it" in p]
    elsewhere = dataclasses.replace(killed, requirement="BGD-002")
    assert [p for p in pitfall_problems(spec, elsewhere) if "covers" in p and "not BGD-002" in p]
    nowhere = dataclasses.replace(killed, at="/reason")
    assert [p for p in pitfall_problems(spec, nowhere) if "nothing at '/reason'" in p]


def test_a_reference_that_answers_otherwise_is_caught(spec: Spec, pitfalls: list[Pitfall]) -> None:
    """The reference is asked, not assumed: an answer other than the vector's is reported."""
    killed = _pitfall(pitfalls, "BGD-003", "upstream-remote-abort-with-diagnostic")
    problems = pitfall_problems(spec, killed, call=lambda op, value: {"status": "killed"})
    assert [p for p in problems if "the reference answers 'killed'" in p]


def test_a_recipe_pitfall_is_expanded(spec: Spec, pitfalls: list[Pitfall]) -> None:
    """A text recipe (a 4,000-byte bound) is compared as its string: one code point off is caught."""
    cut = _pitfall(pitfalls, "DIA-020", "two-byte-straddles-cut")
    assert cut.recipe and pitfall_problems(spec, cut) == []
    longer = dataclasses.replace(cut, right={"concat": [{"repeat": "x", "times": 4073}, "\n[diagnostic truncated]"]})
    assert len(pitfall_problems(spec, longer)) == 2


# ---------------------------------------------------------------- the renderer refuses what the spec contradicts


def _template(tmp_path: Path, entry: str) -> Path:
    template = tmp_path / "guide.md"
    template.write_text(f"# Guide\n\nSome prose.\n\n{FENCE}\n{entry}```\n", encoding="utf-8")
    return template


_ENTRY = """- requirement: {requirement}
  operation: job_outcome
  vector: background job_vectors upstream-remote-abort-with-diagnostic
  at: /status
  right: failed
  wrong: {wrong}
  text: An aborted result with a diagnostic is a failed Job.
"""


def test_the_renderer_shows_a_pitfall_with_its_check(spec: Spec, tmp_path: Path) -> None:
    template = _template(tmp_path, _ENTRY.format(requirement="BGD-003", wrong="killed"))
    text = render_guide(Site(spec, ROOT), TestMap(), template)
    assert "Pitfalls:" in text and '`/status` is `"failed"`, not `"killed"`' in text
    assert "[BGD-003](contract/background.md#BGD-003)" in text


@pytest.mark.parametrize(
    ("requirement", "wrong", "message"),
    [
        ("BGD-002", "killed", "the vector covers ['BGD-003', 'BGD-006', 'BGD-009'], not BGD-002"),
        ("BGD-999", "killed", "no requirement BGD-999 in the spec"),
        ("BGD-003", "failed", "right and wrong are the same value"),
    ],
)
def test_the_renderer_refuses_a_pitfall_the_spec_contradicts(
    spec: Spec, tmp_path: Path, requirement: str, wrong: str, message: str
) -> None:
    template = _template(tmp_path, _ENTRY.format(requirement=requirement, wrong=wrong))
    with pytest.raises(GuideError) as raised:
        render_guide(Site(spec, ROOT), TestMap(), template)
    assert str(raised.value).startswith(f"{template}:5: pitfall 1 ({requirement}, vector")
    assert message in str(raised.value)


def test_the_renderer_names_a_malformed_pitfall(spec: Spec, tmp_path: Path) -> None:
    template = _template(tmp_path, "- requirement: BGD-003\n  vector: background job_vectors x\n")
    with pytest.raises(GuideError, match=r"guide\.md:5: pitfall 1: missing \['at', 'operation'"):
        render_guide(Site(spec, ROOT), TestMap(), template)
    unclosed = tmp_path / "unclosed.md"
    unclosed.write_text(f"# Guide\n\n{FENCE}\n- requirement: BGD-003\n", encoding="utf-8")
    with pytest.raises(GuideError, match=r"unclosed\.md:3: the pitfalls block is never closed"):
        render_guide(Site(spec, ROOT), TestMap(), unclosed)
