"""An exec response line is read exactly as ``json.loads`` reads it, though orjson reads most
lines (conformance/harness/exec_lines.py ``parse_line``): same values, same types, same refusals."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.areas.texts import any_text
from conformance.harness.exec_lines import parse_line

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)  # around the 64-bit edges orjson reads as floats
    | st.integers(min_value=-(2**63) - 2, max_value=-(2**63) + 2)
    | st.floats(allow_nan=True, allow_infinity=True)
    | any_text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_a_line_reads_as_json_loads_reads_it(value: Any, ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _same(parse_line(line), json.loads(line))


@pytest.mark.parametrize(
    "line",
    [b"[18446744073709551616]", b"[-9223372036854775809]", b"[1e400]", b"[NaN]", b'["\\ud800"]', b'{"a":1,"a":2}'],
)
def test_lines_orjson_would_read_otherwise_read_as_json(line: bytes) -> None:
    assert _same(parse_line(line), json.loads(line))


def _refusal(read: Callable[[bytes], Any], line: bytes) -> tuple[type[BaseException], str] | None:
    try:
        read(line)
    except ValueError as exc:
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("line", [b"", b"{", b"[1,]", b"\xff", b'"\n"', b"[01]"])
def test_what_json_refuses_is_refused_with_its_error(line: bytes) -> None:
    refused = _refusal(json.loads, line)
    assert refused is not None
    assert _refusal(parse_line, line) == refused
