"""A failing settle or render check prints its case as a vector row that pastes into the spec:
the spec still loads with the row in place, and the row holds the case exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.areas.results.oracle import check_rendering, check_settlement, expected_rendering, expected_settlement
from conformance.spec import load_spec
from conformance.verdict.blame import Violation

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
