"""A failing settle or render check prints its case as a vector row that pastes into the spec:
the spec still loads with the row in place, and the row holds the case exactly. A failing golden
vector is not a new case: it is named as the spec's vector and breaks its table's requirement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.areas.results.oracle import check_rendering, check_settlement, expected_rendering, expected_settlement
from conformance.areas.selection.blame import check_folded
from conformance.areas.selection.oracle import oracle_values
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from conformance.verdict.blame import Violation, golden_vector
from tests.conftest import RunSuite

REQUEST: dict[str, Any] = {
    "binding": "chunk-events",
    "shape": "one-shot",
    "driver": "in-process",
    "steps": [
        {"event": {"type": "turn/start", "seq": 1, "time": 1, "data": {"turn": 1}}},
        {"event": {"type": "step/start", "seq": 2, "time": 2, "data": {"turn": 1, "step": 1}}},
        {
            "event": {
                "type": "assistant/chunk",
                "seq": 3,
                "time": 3,
                "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "draft 权限"}},
            }
        },
        {"event": {"type": "step/end", "seq": 4, "time": 4, "data": {"turn": 1, "step": 1}}},
        {"event": {"type": "turn/end", "seq": 5, "time": 5, "data": {"turn": 1, "reason": {"kind": "max-tokens"}}}},
    ],
    "boundary": 0,
    "turnEnd": "max-tokens",
    "cancelled": True,
}


def _paste(spec_copy: Path, table: str, row: str) -> None:
    path = spec_copy / "results.yaml"
    text = path.read_text(encoding="utf-8")
    anchor = text.index("\n    rows:\n", text.index(f"\n  {table}:\n")) + len("\n    rows:\n")
    path.write_text(text[:anchor] + row + "\n" + text[anchor:], encoding="utf-8")


def test_a_settle_failure_pastes_as_a_settle_vector(spec_copy: Path) -> None:
    spec = load_spec()
    expected = expected_settlement(spec, REQUEST, lambda text: text)
    wrong = {
        "result": {**expected["result"], "stopReason": "max-tokens"},
        "end": {**expected["end"], "stopReason": "max-tokens"},
    }
    with pytest.raises(Violation) as caught:
        check_settlement(spec, REQUEST, expected, wrong)
    assert caught.value.requirements == ("RES-011",)  # the cancelled column of one_shot_stop_reasons
    [row] = caught.value.sections.values()
    _paste(spec_copy, "settle_vectors", row)
    [pasted] = [
        r for r in load_spec(spec_copy).table("results", "settle_vectors").rows if r["name"] == "found-by-hypothesis"
    ]
    assert (pasted["input"], pasted["expected"], pasted["covers"]) == (REQUEST, expected, ["RES-011"])


def test_a_render_failure_pastes_as_a_render_vector(spec_copy: Path) -> None:
    spec = load_spec()
    result = {"output": [{"type": "text", "text": "so far"}], "stopReason": "error", "diagnostic": "d"}
    expected = expected_rendering(spec, result)
    with pytest.raises(Violation) as caught:
        check_rendering(spec, result, expected, {**expected, "text": expected["text"].replace("\nDiagnostic: d", "")})
    assert caught.value.requirements == ("RES-024",)
    [row] = caught.value.sections.values()
    _paste(spec_copy, "render_vectors", row)
    [pasted] = [
        r for r in load_spec(spec_copy).table("results", "render_vectors").rows if r["name"] == "found-by-hypothesis"
    ]
    assert (pasted["result"], pasted["expected"], pasted["covers"]) == (result, expected, ["RES-024"])


def test_a_failing_golden_vector_is_labelled_as_that_vector() -> None:
    """A golden vector that fails is named as the spec's vector (it is there already), never offered
    as a found-by-hypothesis row, and breaks its table's requirement after the rule that tells."""
    spec = load_spec()
    vector = spec.table("selection", "golden_vectors").rows[0]
    values = oracle_values(spec, vector["binding"], vector["steps"])
    wrong = [*values[:-1], None]  # the fold loses its selection at the last step
    with pytest.raises(Violation) as caught, golden_vector(spec, "selection", "golden_vectors", vector):
        check_folded(spec, vector["binding"], vector["steps"], wrong)
    found = caught.value
    [rule, holds] = found.requirements
    assert rule != "SEL-027" and holds == "SEL-027"
    assert found.sections["golden vector (spec/selection.yaml, table golden_vectors)"].startswith(
        f'name: "{vector["name"]}"'
    )
    assert "found-by-hypothesis" not in str(found)


def test_a_failing_settle_vector_is_labelled_as_that_vector() -> None:
    spec = load_spec()
    vector = spec.table("results", "settle_vectors").rows[0]
    wrong = {**vector["expected"], "result": {**vector["expected"]["result"], "stopReason": "frobnicated"}}
    with pytest.raises(Violation) as caught, golden_vector(spec, "results", "settle_vectors", vector):
        check_settlement(spec, vector["input"], vector["expected"], wrong)
    assert caught.value.requirements[-1] == "RES-018" and len(caught.value.requirements) > 1
    assert vector["name"] in caught.value.sections["golden vector (spec/results.yaml, table settle_vectors)"]
    assert "found-by-hypothesis" not in str(caught.value)


def test_golden_vector_failures_violate_their_requirement(run_suite: RunSuite) -> None:
    """Against an adapter whose golden vectors fail, "the golden vectors hold" is violated, not
    passed, and every failing vector's report names the vector."""
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_selection",
        "conformance.test_results",
        "-k",
        "test_golden_vector or test_settle_vector",
        impl="bad_no_text_fallback",
        importable=[fixtures_dir() / "known_bad"],
        report=True,
    )
    assert run.code == 1, run.tail
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert statuses["SEL-027"] == statuses["RES-018"] == "violated"
    failed = run.failed()
    assert failed
    for test in failed:
        name = test["nodeid"].rsplit("[", 1)[1].rstrip("]")
        [record] = test["failures"]
        assert any(title.startswith("golden vector (") and name in text for title, text in record["sections"].items())
        assert "found-by-hypothesis" not in str(record)
