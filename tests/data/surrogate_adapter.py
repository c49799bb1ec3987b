"""An adapter whose every operation answers like the reference, but with a lone surrogate
appended to each text it returns, or (SURROGATE_ADAPTER_RAISES=1) raises an error whose message
holds one. Run in-process (--impl=surrogate_adapter) or over exec (run as a script: the lone
surrogate then travels as the JSON escape "\\ud83d", as a JavaScript adapter would send it)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import reference_impl

CONFORMANCE = dict(reference_impl.CONFORMANCE)
LONE = "\ud83d"
TEXTS = {"text", "diagnostic", "rejected", "summary", "detail", "output", "lastAssistantMessage"}


def poison(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, key) for v in value]
    if isinstance(value, str) and (key in TEXTS or not key):
        return value + LONE
    return value


def answer(operation: str, request: Any) -> Any:
    if os.environ.get("SURROGATE_ADAPTER_RAISES"):
        raise RuntimeError(f"{operation} fell over on {LONE} and \udc00")
    return poison(getattr(reference_impl, operation)(request))


for _name in reference_impl.__all__:
    if _name != "CONFORMANCE":
        globals()[_name] = lambda request, _op=_name: answer(_op, request)


def serve() -> None:
    """The exec protocol: JSON lines in, JSON lines out (ASCII, so a lone surrogate is an escape)."""
    for line in sys.stdin:
        call = json.loads(line)
        try:
            output = CONFORMANCE if call["op"] == "describe" else answer(call["op"], call["input"])
            reply = {"id": call["id"], "output": output}
        except Exception as exc:  # the protocol's error answer
            reply = {"id": call["id"], "error": {"message": str(exc)}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
