"""The provider's end of a live app-server's stdio: the JSON-RPC conversation of run_codex.

Written as a provider talks to @openai/codex 0.147.0's ``app-server``: startup is the initialize /
initialized / ephemeral thread/start handshake (tables client_frames, mode_fields); once the
thread exists the run is published, turn/start is written and every later stdout line goes to the
pure classifier of ``reference_impl.codex`` (``CodexRun``), whose replies to server requests are
written back at once. stderr is scanned by that classifier for its two signatures and never
copied anywhere; the exit is observed as Node.js reports it. The run's lifecycle around this
conversation (start(), the reader thread, cancellation, result, dispose() and teardown) is
:mod:`reference_impl.codex_process`.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from typing import Any

from reference_impl.codex import CodexRun
from reference_impl.codex_errors import BASE_VERSION
from reference_impl.codex_wire import encode_frame, internal_error, is_number, parse_line
from reference_impl.process import Command, Exit, Line, Pipes, ProcessOutcome, Stderr, StdoutEnd, outcome_of
from reference_impl.process_host import AbortSignal

Json = dict[str, Any]

CLIENT_INFO = {"name": "deepseek-harness", "title": "DeepSeek Harness", "version": "0.0.1"}
CAPABILITIES = {"experimentalApi": False, "requestAttestation": False}
MODE_FIELDS: dict[str, Json] = {
    "never": {"approvalPolicy": "never"},
    "approve-for-me": {
        "approvalPolicy": "on-request",
        "approvalsReviewer": "auto_review",
        "sandbox": "workspace-write",
    },
    "dangerously-bypass-approvals-and-sandbox": {"approvalPolicy": "never", "sandbox": "danger-full-access"},
}
CONSUMED_NOTIFICATIONS = frozenset({"turn/started", "item/completed", "turn/completed"})

# How long the app-server gets to exit after SIGTERM before SIGKILL, and to exit after its stdout
# ended before the run settles without its outcome (CDX-046).
DISPOSAL_GRACE = 0.3


class StartupFailure(Exception):
    """Startup failed or was cancelled at ``stage``; the message is internal and never shown."""

    def __init__(self, stage: str, reason: str, *, cancelled: bool = False) -> None:
        super().__init__(reason)
        self.stage = stage
        self.cancelled = cancelled


class AppServerClient:
    """One app-server's stdio as the provider uses it: frames written, the startup handshake, and
    what is observed of stdout, stderr and the exit (by the reader thread that owns ``pipes``)."""

    observed = staticmethod(outcome_of)  # an exit as Node.js reports it
    version = BASE_VERSION  # the @openai/codex version the published run maps (productVersion)

    def __init__(self, mode: str, cwd: str | None, abort: AbortSignal) -> None:
        self.mode = mode
        self.cwd = cwd
        self.abort = abort
        self.texts: list[str] = []
        self.stage = "initialize"
        self.child: subprocess.Popen[bytes] | None = None
        self.pipes: Pipes | None = None
        self.outcome: ProcessOutcome | None = None
        self.run: CodexRun | None = None
        self.early_stderr: list[str] = []
        self.turn_start_id: str | None = None
        self.turn_start_answered = False
        self.replies_written = 0
        self.wire_open = True
        self.stdout_ended = False

    # ---- the wire

    def _write(self, frame: Json) -> None:
        assert self.child is not None and self.child.stdin is not None
        if not self.wire_open:
            return
        try:
            self.child.stdin.write(encode_frame(frame))
            self.child.stdin.flush()
        except (OSError, ValueError):
            pass  # the app-server is gone; its exit or stdout end settles the run

    def _request(self, method: str, params: Json) -> str:
        request_id = f"req_{uuid.uuid4().hex}"
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    # ---- startup

    def _startup(self) -> None:
        response = self._await_response(
            self._request("initialize", {"clientInfo": CLIENT_INFO, "capabilities": CAPABILITIES})
        )
        if not isinstance(response.get("result"), dict):
            raise StartupFailure(self.stage, "invalid initialize response")
        self._write({"jsonrpc": "2.0", "method": "initialized"})
        self.stage = "thread-start"
        params = {"cwd": self.cwd, "ephemeral": True, **MODE_FIELDS[self.mode]}
        response = self._await_response(self._request("thread/start", params))
        result = response.get("result")
        thread = result.get("thread") if isinstance(result, dict) else None
        if not isinstance(thread, dict) or not isinstance(thread.get("id"), str) or not thread["id"]:
            raise StartupFailure(self.stage, "invalid thread/start thread")
        if thread.get("ephemeral") is not True:
            raise StartupFailure(self.stage, "the app-server did not create an ephemeral thread")
        if self.abort.aborted:
            raise StartupFailure(self.stage, "cancelled", cancelled=True)
        # Published: from here on every failure is the run's result.
        self.run = CodexRun(self.mode, thread["id"])
        self.run.version = self.version
        for chunk in self.early_stderr:
            self.run.on_stderr(chunk)
        self.stage = "turn-start"
        inputs = [{"type": "text", "text": text, "text_elements": []} for text in self.texts]
        self.turn_start_id = self._request("turn/start", {"threadId": thread["id"], "input": inputs})

    def _await_response(self, request_id: str) -> Json:
        """The app-server's response to a startup request; anything else that settles startup raises."""
        assert self.pipes is not None
        while True:
            event = self.pipes.next(None)
            if isinstance(event, Stderr):
                self._stderr(event.text)
            elif isinstance(event, Exit):
                self._exited(event)
                raise StartupFailure(self.stage, "the app-server exited")
            elif isinstance(event, StdoutEnd):
                self.stdout_ended = True
                self._await_exit()
                raise StartupFailure(self.stage, "the app-server closed its stdout")
            elif isinstance(event, Command):
                if event.name == "cancel":
                    raise StartupFailure(self.stage, "cancelled", cancelled=True)
            elif isinstance(event, Line):
                response = self._startup_frame(event.text, request_id)
                if response is not None:
                    return response

    def _startup_frame(self, line: str, request_id: str) -> Json | None:
        try:
            frame = parse_line(line)
        except ValueError:
            return None
        if not isinstance(frame, dict):
            return None
        frame_id, method = frame.get("id"), frame.get("method")
        has_id = isinstance(frame_id, str) or is_number(frame_id)
        if has_id and isinstance(method, str):
            # No thread or turn exists yet, so no server request can be answered.
            self._write({"jsonrpc": "2.0", **internal_error(frame_id)})
            raise StartupFailure(self.stage, "app-server request before turn/start")
        if has_id:
            if frame_id != request_id:
                return None
            if isinstance(frame.get("error"), dict):
                raise StartupFailure(self.stage, "error response")
            return frame
        params = frame.get("params")
        if method in CONSUMED_NOTIFICATIONS:
            thread_id = params.get("threadId") if isinstance(params, dict) else None
            if not isinstance(thread_id, str) or not thread_id:
                raise StartupFailure(self.stage, "notification with an invalid thread id")
        return None

    # ---- what is observed of the process

    def _await_exit(self) -> bool:
        """After stdout ended: give the app-server the grace to exit, and observe it if it does.
        False when a command (cancellation, dispose) came first: the caller handles it."""
        assert self.pipes is not None
        deadline = time.monotonic() + DISPOSAL_GRACE
        while self.outcome is None:
            event = self.pipes.next(max(0.0, deadline - time.monotonic()))
            if event is None:
                break
            if isinstance(event, Exit):
                self._exited(event)
            elif isinstance(event, Stderr):
                self._stderr(event.text)
            elif isinstance(event, Command):
                self.pipes.pending.appendleft(event)
                return False
        return True

    def _exited(self, event: Exit) -> None:
        """The app-server's exit is observed: its outcome is known from now on."""
        self.outcome = self.observed(event.returncode)
        if self.run is not None:
            self.run.on_exit(self.outcome.exit_code, self.outcome.signal)

    def _stderr(self, chunk: str) -> None:
        """A stderr chunk: scanned for the two signatures by the published run (replayed into it
        when it is published later), never kept or copied otherwise."""
        if self.run is not None:
            self.run.on_stderr(chunk)
        else:
            self.early_stderr.append(chunk)

    # ---- the published run's frames

    def _frame(self, line: str) -> None:
        """A stdout line of the published run, and the replies the run chose written back at once."""
        assert self.run is not None
        response = self._turn_start_response(line)
        if response is not None:
            self.turn_start_answered = True
            self.stage = "turn"
            self.run.on_turn_start_response(response)
        else:
            self.run.on_stdout_line(line)
        for reply in self.run.replies[self.replies_written :]:
            self._write({"jsonrpc": "2.0", **reply})
        self.replies_written = len(self.run.replies)

    def _turn_start_response(self, line: str) -> Json | None:
        if self.turn_start_answered:
            return None
        try:
            frame = parse_line(line)
        except ValueError:
            return None
        if (
            isinstance(frame, dict)
            and frame.get("id") == self.turn_start_id
            and not isinstance(frame.get("method"), str)
        ):
            return frame
        return None
