"""The app-server's JSON-RPC wire as the provider's JavaScript client reads and writes it.

Written once for the pure classifier (``reference_impl.codex``) and the client of a live
app-server (``reference_impl.codex_client``), so that both see a stdout line the same way:
trimmed and parsed as JSON.parse would, with JavaScript's idea of blank text and of a number. A
frame that breaks the protocol fails the run as unknown, with a message that never leaves the
provider.
"""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]

# ECMAScript WhiteSpace and LineTerminator: what String.prototype.trim() removes.
JS_WHITESPACE = frozenset(
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

INTERNAL_ERROR = -32603


class ProtocolFailure(Exception):
    """The app-server broke the protocol; the run fails with category unknown. The message is
    provider-internal and never reaches a diagnostic."""


def is_blank(text: str) -> bool:
    """Blank as JavaScript's trim() sees it (U+001C or U+0085 are content)."""
    return all(ch in JS_WHITESPACE for ch in text)


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in JS_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in JS_WHITESPACE:
        end -= 1
    return text[start:end]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: str) -> Any:
    """JSON.parse of one trimmed stdout line; NaN and Infinity are not JSON."""
    return json.loads(js_trim(line), parse_constant=_reject_constant)


def encode_frame(frame: Json) -> bytes:
    """One frame as the client writes it to the app-server's stdin: compact JSON and a newline."""
    return (json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def internal_error(request_id: Any) -> Json:
    """The error response to a server request the client cannot answer; it tells nothing more."""
    return {"id": request_id, "error": {"code": INTERNAL_ERROR, "message": "internal error"}}


def is_number(value: Any) -> bool:
    """typeof value === 'number' after JSON.parse: a JSON boolean is not a number."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def non_empty_string(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ProtocolFailure(f"subagent-codex: app-server returned invalid {what}")
    return value


def json_object(value: Any, what: str) -> Json:
    if not isinstance(value, dict):
        raise ProtocolFailure(f"subagent-codex: app-server returned invalid {what}")
    return value
