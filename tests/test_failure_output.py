"""A failing selection property prints its example as a golden vector ready to paste."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.areas.selection.blame import assert_selection
from conformance.spec import load_spec

STEPS = [
    {
        "event": {
            "type": "assistant/chunk",
            "seq": 1,
            "time": 1,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "partial 权限"}},
        }
    },
    {
        "event": {
            "type": "assistant/message",
            "seq": 2,
            "time": 2,
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "role": "assistant",
                    "content": [],
                    "source": {"kind": "model", "provider": "p", "model": "m"},
                    "id": "m1",
                },
                "usage": {"inputTokens": 1, "outputTokens": 1},
            },
            "surfaceOp": "append",
        }
    },
]


def test_mismatch_is_printed_as_a_pasteable_golden_vector(spec_copy: Path) -> None:
    expected = [{"type": "text", "text": "partial 权限"}]
    with pytest.raises(AssertionError) as caught:
        assert_selection("chunk-events", ["SEL-003", "SEL-008"], STEPS, expected, [], "select_output")
    message = str(caught.value)
    assert message.startswith("violates SEL-003 (MUST) "), message  # what the empty message erased
    assert 'expected: [{"type": "text", "text": "partial 权限"}]\nactual: []\n' in message
    vector = message.split("table golden_vectors):\n", 1)[1]

    # Paste it into a copy of the spec: the spec must still load, with the new row in place.
    selection = spec_copy / "selection.yaml"
    text = selection.read_text(encoding="utf-8")
    anchor = text.index("\n    rows:\n", text.index("\n  golden_vectors:\n")) + len("\n    rows:\n")
    selection.write_text(text[:anchor] + vector + "\n" + text[anchor:], encoding="utf-8")
    [pasted] = [
        r for r in load_spec(spec_copy).table("selection", "golden_vectors").rows if r["name"] == "found-by-hypothesis"
    ]
    assert (pasted["steps"], pasted["expected"], pasted["covers"]) == (STEPS, expected, ["SEL-003", "SEL-008"])
