"""Codex's unattended permission decisions: the facts a run may record, and where they come from.

The provider grants nothing interactively. Each server request it answers (table
server_request_replies) is answered at once with the refusing reply and records a fixed fact;
a declined command or file change item and a sandboxError terminal record one too, and so do the
two stderr signatures (table stderr_vectors), even when a signature arrives split across chunks.
Every fact is a fixed triple (table permission_facts): nothing the product said is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_impl.codex_wire import ProtocolFailure

Json = dict[str, Any]


@dataclass(frozen=True)
class PermissionFact:
    """One unattended decision: request, decision and the fixed reason."""

    request: str
    decision: str
    reason: str


NO_INTERACTIVE_APPROVAL = "the provider does not grant interactive approval"
COMMAND_CANCELLED = PermissionFact("command approval", "cancelled", NO_INTERACTIVE_APPROVAL)
COMMAND_DECLINED = PermissionFact("command approval", "declined", NO_INTERACTIVE_APPROVAL)
FILE_CANCELLED = PermissionFact("file approval", "cancelled", NO_INTERACTIVE_APPROVAL)
FILE_DECLINED = PermissionFact("file approval", "declined", NO_INTERACTIVE_APPROVAL)
PERMISSIONS_DENIED = PermissionFact("permission grant", "denied", "the provider grants no additional turn permissions")
USER_INPUT_EMPTY = PermissionFact("user input", "empty response", "the provider does not collect interactive answers")
ELICITATION_DECLINED = PermissionFact(
    "MCP elicitation", "declined", "the provider does not collect interactive MCP input"
)
COMMAND_ITEM_DECLINED = PermissionFact(
    "command execution", "declined", "Codex declined the command under the selected permission mode"
)
FILE_ITEM_DECLINED = PermissionFact(
    "file change", "declined", "Codex declined the file change under the selected permission mode"
)
SANDBOX_FAILURE = PermissionFact("sandbox execution", "failed", "Codex reported a sandbox failure")

STDERR_SIGNATURES: tuple[tuple[str, PermissionFact], ...] = (
    (
        "approval policy is Never; reject command",
        PermissionFact(
            "command execution",
            "denied",
            "Codex rejected an escalation because the selected policy never asks for approval",
        ),
    ),
    (
        "recorded sandbox violation:",
        PermissionFact("sandbox execution", "failed", "Codex reported a sandbox violation"),
    ),
)
STDERR_TAIL_CHARS = max(len(text) for text, _ in STDERR_SIGNATURES) - 1

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
PERMISSIONS_APPROVAL = "item/permissions/requestApproval"
USER_INPUT = "item/tool/requestUserInput"
ELICITATION = "mcpServer/elicitation/request"
SERVER_REQUESTS = frozenset({COMMAND_APPROVAL, FILE_APPROVAL, PERMISSIONS_APPROVAL, USER_INPUT, ELICITATION})


def scan_stderr(tail: str, chunk: str) -> tuple[PermissionFact | None, str]:
    """The fact of the latest signature in the kept tail and a new chunk, and the tail to keep:
    the longest end of the text that may still begin a signature (never anything else)."""
    observed = tail + chunk
    latest_index, latest = -1, None
    for text, fact in STDERR_SIGNATURES:
        index = observed.rfind(text)
        if index > latest_index:
            latest_index, latest = index, fact
    for length in range(min(STDERR_TAIL_CHARS, len(observed)), 0, -1):
        end = observed[-length:]
        if any(len(end) < len(text) and text.startswith(end) for text, _ in STDERR_SIGNATURES):
            return latest, end
    return latest, ""


def unattended_reply(method: str, params: Json) -> tuple[Json, PermissionFact]:
    """The reply to a supported server request and the fact it records; nothing is ever granted."""
    if method in (COMMAND_APPROVAL, FILE_APPROVAL):
        decision = unattended_decision(params)
        if method == COMMAND_APPROVAL:
            fact = COMMAND_CANCELLED if decision == "cancel" else COMMAND_DECLINED
        else:
            fact = FILE_CANCELLED if decision == "cancel" else FILE_DECLINED
        return {"decision": decision}, fact
    if method == PERMISSIONS_APPROVAL:
        return {"permissions": {}, "scope": "turn"}, PERMISSIONS_DENIED
    if method == USER_INPUT:
        return {"answers": {}}, USER_INPUT_EMPTY
    if method == ELICITATION:
        return {"action": "decline", "content": None, "_meta": None}, ELICITATION_DECLINED
    raise ProtocolFailure("subagent-codex: unsupported app-server request")


def unattended_decision(params: Json) -> str:
    """The approval decision that grants nothing, among those the request offers."""
    available = params.get("availableDecisions")
    if available is None:
        return "decline"
    if isinstance(available, list):
        if "cancel" in available:
            return "cancel"
        if "decline" in available:
            return "decline"
    raise ProtocolFailure("subagent-codex: app-server offered no unattended approval decision")
