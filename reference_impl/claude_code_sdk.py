"""What the Claude Agent SDK's query() does on the wire to the CLI, for one one-shot prompt.

The SDK starts the CLI with stream-json flags and its own environment, writes the
``initialize`` control request without waiting for its answer, then the task as the one user
message; it answers the CLI's control requests at once (the provider's callbacks grant nothing),
reads the message stream and, at its end, raises its exit error unless the CLI exited cleanly
(after a failed result, the SDK's "returned an error result" error instead). What differs between
SDK releases is data (:data:`SDK_WIRE`), as this provider measured it on each release's sdk.mjs.
Which messages decide the outcome is not restated here:
:class:`reference_impl.claude_code.ClaudeCodeRun` classifies them.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from reference_impl.claude_code import ERROR_SUBTYPES_BY_RANGE, ClaudeCodeRun, SdkIteratorError
from reference_impl.claude_code_cli import ManagedProcess

Json = dict[str, Any]

# What @anthropic-ai/claude-agent-sdk passes to the CLI for a one-shot query (sdk.mjs).
STREAM_JSON_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]


@dataclass(frozen=True)
class SdkWire:
    """What one range of SDK releases writes and reads on the CLI's wire besides the messages."""

    joined_flags: bool = False  # a valued flag as one ``--flag=value`` argument, not two
    env: dict[str, str] = field(default_factory=dict)  # added to CLAUDE_AGENT_SDK_VERSION=<release>
    reads_session_state: bool = False  # the CLI's sdk_host_only session_state_changed frames are the SDK's


_BASE_ENV = {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}
_STATE_ENV = {**_BASE_ENV, "CLAUDE_CODE_SDK_READS_SESSION_STATE": "1"}
_CRASH_ENV = {**_STATE_ENV, "BUN_ENABLE_CRASH_REPORTING": "0"}
# Each range of releases by its first release, oldest first (sdk.mjs of the releases on either side
# of each boundary: 0.3.283/0.3.284, 0.3.294/0.3.295, 0.3.330/0.3.331).
SDK_WIRE: tuple[tuple[str, SdkWire], ...] = (
    ("0.3.220", SdkWire(env=_BASE_ENV)),
    ("0.3.284", SdkWire(env=_STATE_ENV, reads_session_state=True)),
    ("0.3.295", SdkWire(joined_flags=True, env=_STATE_ENV, reads_session_state=True)),
    ("0.3.331", SdkWire(joined_flags=True, env=_CRASH_ENV, reads_session_state=True)),
)
# Every release this provider supports, oldest first.
RELEASES = tuple(r for releases, _ in ERROR_SUBTYPES_BY_RANGE for r in releases)


def sdk_wire(version: str) -> SdkWire:
    """The wire of ``version``'s range; a release this provider was not built for is an error."""
    if version not in RELEASES:
        raise ValueError(f"no SDK wire for @anthropic-ai/claude-agent-sdk {version}")
    at = RELEASES.index(version)
    return [wire for first, wire in SDK_WIRE if RELEASES.index(first) <= at][-1]


def sdk_environment(version: str) -> dict[str, str]:
    """The variables the SDK at ``version`` sets for the CLI over the configured environment."""
    return {**sdk_wire(version).env, "CLAUDE_AGENT_SDK_VERSION": version}


def valued(version: str, name: str, value: str) -> list[str]:
    """One valued flag as the SDK at ``version`` writes it."""
    return [f"{name}={value}"] if sdk_wire(version).joined_flags else [name, value]


def error_result_text(message: Json) -> str | None:
    """What the SDK keeps of a failed result for the error it throws at the exit (sdk.mjs
    readMessages): a failed success's result, or the errors trimmed, non-empty, joined with "; "."""
    if message.get("is_error") in (None, False, 0, ""):
        return None
    if message.get("subtype") == "success":
        text = message.get("result")
    else:
        errors = message.get("errors")
        strings = errors if isinstance(errors, list) and all(isinstance(e, str) for e in errors) else []
        text = "; ".join(e.strip() for e in strings if e.strip())
    return text if isinstance(text, str) and text else None


# System messages that keep the failed result's text for the exit error (sdk.mjs readMessages).
_KEEPS_ERROR_TEXT = frozenset({"session_state_changed", "session_writes_lost", "plugin_install"})

ABORT_POLL = 0.01  # how often the SDK, waiting for the CLI's exit, looks at its abort signal


class StartupFailure(Exception):
    """Something before publication failed (its message is internal, never shown)."""


class AbortError(Exception):
    """The run's controller was aborted while the SDK was waiting."""


class Query:
    """What the Agent SDK's query() does on the wire, for one one-shot prompt."""

    def __init__(self, process: ManagedProcess, run: ClaudeCodeRun, aborted: threading.Event) -> None:
        self.process = process
        self.run = run
        self.aborted = aborted
        self.error_text: str | None = None  # the latest failed result's text, until another message

    def wake(self) -> None:
        """Unblock whoever waits for the next frame (the controller was aborted)."""
        self.process.frames.put(("cancel", None))

    def _next(self) -> tuple[str, Any]:
        """The next stream item, with control requests answered on the way."""
        while True:
            if self.aborted.is_set():
                return "cancel", None
            kind, value = self.process.frames.get()
            if kind == "frame" and value.get("type") == "control_request":
                self._answer(value)
                continue
            if kind == "frame" and value.get("type") in ("control_response", "control_cancel_request", "keep_alive"):
                continue  # the answer to initialize (success or error) changes nothing, as in the SDK
            if kind == "frame" and self._host_only(value):
                continue  # the SDK's own session state, never a message of query()
            return kind, value

    def _host_only(self, frame: Json) -> bool:
        return (
            sdk_wire(self.run.version).reads_session_state
            and frame.get("type") == "system"
            and frame.get("subtype") == "session_state_changed"
            and frame.get("sdk_host_only") is True
        )

    def _answer(self, frame: Json) -> None:
        """A control request of the CLI, answered at once; nothing is ever granted."""
        raw = frame.get("request")
        request: Json = raw if isinstance(raw, dict) else {}
        callbacks = self.run.callbacks()
        subtype = request.get("subtype")
        answer: Json | None = None
        if subtype == "can_use_tool" and "canUseTool" in callbacks:
            answer = callbacks["canUseTool"](request.get("tool_name"), request.get("input"), request)
        elif subtype == "elicitation":
            answer = callbacks["onElicitation"](request)
        elif subtype == "request_user_dialog":
            answer = callbacks["onUserDialog"](request)
        request_id = frame.get("request_id")
        if answer is None:
            response: Json = {"subtype": "error", "request_id": request_id, "error": "Unsupported control request"}
        else:
            response = {"subtype": "success", "request_id": request_id, "response": answer}
        self.process.write({"type": "control_response", "response": response})

    def _end_of_stream(self) -> None:
        """stdout ended: wait for the exit and raise the SDK's exit error unless it was a clean 0."""
        while not self.process.exited.wait(ABORT_POLL):
            if self.aborted.is_set():
                raise AbortError("aborted")
        outcome = self.process.final_outcome()
        # The provider spawns the CLI itself (spawnClaudeCodeProcess): the SDK sees no stderr, so
        # its exit error carries no ". stderr: " tail; after a failed result it throws that instead.
        if outcome.exit_code is None:  # killed by a signal (one Node cannot name is still not a clean exit)
            error = f"Claude Code process terminated by signal {outcome.signal}"
        elif outcome.exit_code:
            error = f"Claude Code process exited with code {outcome.exit_code}"
        else:
            return
        if self.error_text is not None:
            raise SdkIteratorError(f"Claude Code returned an error result: {self.error_text}")
        raise SdkIteratorError(error)

    def open(self) -> None:
        """What the SDK's Query constructor writes: the initialize control request, whose answer
        nobody waits for (the SDK only attaches a catch to it)."""
        request = {"subtype": "initialize", "systemPrompt": [""]}  # no hooks, no system prompt of its own
        self.process.write({"type": "control_request", "request_id": f"req_1_{uuid.uuid4().hex}", "request": request})

    def send_task(self, prompt: str) -> None:
        """The one-shot task as the one user message, written as query() returns."""
        message = {"role": "user", "content": [{"type": "text", "text": prompt}]}  # a string prompt as one text block
        self.process.write({"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None})

    def first_output(self) -> None:
        """Return at the first thing the CLI does besides the control protocol (a message, a
        malformed line, or the end of its stdout once it exited), answering control requests on
        the way; StartupFailure if the controller is aborted first. Only a run that injects a
        failure of the query's construction (fault ``query_construction``) waits for it: its
        construction lasts until then, so its script decides whether the CLI is still alive."""
        kind, _ = self._next()
        if kind == "cancel":
            raise StartupFailure("aborted during startup")
        while kind == "eof" and not self.process.exited.wait(ABORT_POLL):
            if self.aborted.is_set():
                raise StartupFailure("aborted during startup")

    def messages(self) -> Iterator[Json]:
        """The SDK message stream: ends normally only at a clean exit; stdin closes after a result."""
        result_seen = False
        while True:
            if result_seen:
                self.process.end_input()  # a single-turn prompt: no more input after its result
            kind, value = self._next()
            if kind == "cancel":
                raise AbortError("aborted")
            if kind == "malformed":
                raise SdkIteratorError(f"invalid stream-json from Claude Code: {value}")
            if kind == "eof":
                self._end_of_stream()
                return
            if value.get("type") == "result":
                result_seen, self.error_text = True, error_result_text(value)
            elif not (value.get("type") == "system" and value.get("subtype") in _KEEPS_ERROR_TEXT):
                self.error_text = None
            yield value

    def close(self) -> None:
        self.process.end_input()
        self.wake()
