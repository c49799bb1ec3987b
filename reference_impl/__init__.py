"""The bundled reference implementation of the subagent result contract.

Written as a real harness and real providers would write it, not as an interpreter of
the spec tables, so that checking it against the spec means something. This module is
also its adapter: ``pytest --impl=reference_impl``.
"""

from __future__ import annotations

from typing import Any

from reference_impl.background import job_notice, job_outcome, job_output, settlement_notice
from reference_impl.diagnostic import bound_diagnostic as _bound
from reference_impl.results import render_tool_result, settle_run
from reference_impl.selection import AssistantOutputFold, collected_after_each, final_assistant_output

CONFORMANCE: dict[str, Any] = {
    "protocol": "1",
    "bindings": ["chunk-events", "embedded-stream", "text-stream"],
    "providers": {"claude-code": "0.3.220", "codex": "0.147.0"},
    "process_drivers": ["claude-code", "codex"],
    "background": ["job", "notice"],
}

__all__ = [
    "CONFORMANCE",
    "bound_diagnostic",
    "claude_code_outcome",
    "codex_outcome",
    "fold_output",
    "format_diagnostic",
    "job_notice",
    "job_outcome",
    "job_output",
    "render_tool_result",
    "run_claude_code",
    "run_codex",
    "select_output",
    "settle_run",
    "settlement_notice",
]


def select_output(request: dict[str, Any]) -> list[dict[str, Any]] | None:
    return final_assistant_output(request["events"], request["binding"])


def fold_output(request: dict[str, Any]) -> list[list[dict[str, Any]] | None]:
    return collected_after_each(AssistantOutputFold(request["binding"]), request["steps"])


def bound_diagnostic(request: dict[str, Any]) -> dict[str, str]:
    return {"text": _bound(request["text"])}


def format_diagnostic(request: dict[str, Any]) -> dict[str, str]:
    from reference_impl.diagnostic import format_diagnostic as run

    return run(request)


def claude_code_outcome(request: dict[str, Any]) -> dict[str, Any]:
    from reference_impl.claude_code import claude_code_outcome as run

    return run(request)


def codex_outcome(request: dict[str, Any]) -> dict[str, Any]:
    from reference_impl.codex import codex_outcome as run

    return run(request)


def run_claude_code(request: dict[str, Any]) -> dict[str, Any]:
    from reference_impl.claude_code_process import run_claude_code as run

    return run(request)


def run_codex(request: dict[str, Any]) -> dict[str, Any]:
    from reference_impl.codex_process import run_codex as run

    return run(request)
