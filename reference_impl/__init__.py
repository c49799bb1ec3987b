"""The bundled reference implementation of the subagent result contract.

Written as a real harness and real providers would write it, not as an interpreter of
the spec tables, so that checking it against the spec means something. This module is
also its adapter: ``pytest --impl=reference_impl``.
"""

from __future__ import annotations

from typing import Any

from reference_impl.diagnostic import bound_diagnostic as _bound
from reference_impl.results import render_tool_result, settle_run
from reference_impl.selection import AssistantOutputFold, collected_after_each, final_assistant_output

CONFORMANCE: dict[str, Any] = {
    "protocol": "1",
    "bindings": ["chunk-events", "embedded-stream", "text-stream"],
    "providers": {},
    "process_drivers": [],
}

__all__ = [
    "CONFORMANCE",
    "bound_diagnostic",
    "fold_output",
    "render_tool_result",
    "select_output",
    "settle_run",
]


def select_output(request: dict[str, Any]) -> list[dict[str, Any]] | None:
    return final_assistant_output(request["events"], request["binding"])


def fold_output(request: dict[str, Any]) -> list[list[dict[str, Any]] | None]:
    return collected_after_each(AssistantOutputFold(request["binding"]), request["steps"])


def bound_diagnostic(request: dict[str, Any]) -> dict[str, str]:
    return {"text": _bound(request["text"])}
