"""What the Claude Agent SDK's query() does on the wire to the CLI, for one one-shot prompt.

The SDK starts the CLI with stream-json flags and its own environment, writes the
``initialize`` control request without waiting for its answer, then the task as the one user
message; it answers the CLI's control requests at once (the provider's callbacks grant nothing),
reads the message stream and, at its end, raises its exit error unless the CLI exited cleanly. Which messages decide the
outcome is not restated here: :class:`reference_impl.claude_code.ClaudeCodeRun` classifies them.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

from reference_impl.claude_code import ClaudeCodeRun, SdkIteratorError
from reference_impl.claude_code_cli import ManagedProcess

Json = dict[str, Any]

SDK_VERSION = "0.3.220"
# What @anthropic-ai/claude-agent-sdk passes to the CLI for a one-shot query (sdk.mjs).
STREAM_JSON_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
SDK_ENVIRONMENT = {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts", "CLAUDE_AGENT_SDK_VERSION": SDK_VERSION}

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
            return kind, value

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
        tail = self.process.stderr_tail()
        if outcome.exit_code is None:  # killed by a signal (one Node cannot name is still not a clean exit)
            raise SdkIteratorError(f"Claude Code process terminated by signal {outcome.signal}\n{tail}")
        if outcome.exit_code:
            raise SdkIteratorError(f"Claude Code process exited with code {outcome.exit_code}\n{tail}")

    def open(self) -> None:
        """What the SDK's Query constructor writes: the initialize control request, whose answer
        nobody waits for (the SDK only attaches a catch to it)."""
        request = {"subtype": "initialize", "hooks": None}
        self.process.write({"type": "control_request", "request_id": f"req_1_{uuid.uuid4().hex}", "request": request})

    def send_task(self, prompt: str) -> None:
        """The one-shot task as the one user message, written as query() returns."""
        message = {"role": "user", "content": prompt}
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
            result_seen = result_seen or value.get("type") == "result"
            yield value

    def close(self) -> None:
        self.process.end_input()
        self.wake()
