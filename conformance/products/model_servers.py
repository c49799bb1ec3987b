"""Fake model services on 127.0.0.1 for the real products: the OpenAI Responses API (what Codex
calls) and the Anthropic Messages API (what Claude Code calls), both streaming (SSE).

Each server plays one named behaviour for every model call it receives, so a case of the real
tier is one word: ``http-500``, ``http-429``, ``http-401`` (the key is refused), ``http-400``
(the request is refused), ``stream-cut`` (the SSE stream starts, a text delta arrives, then the
connection closes before the final event), ``stream-stalled`` (the same start, then nothing
more: the connection stays open and silent until the client gives up or the server stops),
``tool-use-loop`` (every call asks for a tool, forever) and ``answer`` (a complete text
answer). Servers listen on an ephemeral port, serve each connection in a thread and remember
every request, so a test can prove that retries were off and that nothing but the model endpoint
was called.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = Any

BEHAVIOURS = ("http-500", "http-429", "http-401", "http-400", "stream-cut", "stream-stalled", "tool-use-loop", "answer")
ERROR_STATUS = {
    "http-500": 500,
    "http-429": 429,
    "http-401": 401,
    "http-400": 400,
}  # the behaviours that are one HTTP error
DEFAULT_TEXT = "Hello from the fake model."  # what the model says unless params["text"] is given


@dataclass(frozen=True)
class Exchange:
    """One request the server received (the body parsed as JSON when it is JSON)."""

    method: str
    path: str
    body: Json


@dataclass(frozen=True)
class Reply:
    """What to answer: a status with a JSON body, or an SSE stream (a cut stream simply lacks the
    API's final event: the connection closes after the last one given; a stalled one stays open
    and silent after it)."""

    status: int = 200
    body: Json = None
    events: tuple[tuple[str, Json], ...] = ()
    stall: bool = False


class Api:
    """One wire protocol: which paths are model calls and how each behaviour is written."""

    name = ""
    model_paths: tuple[str, ...] = ()

    def error(self, status: int) -> Reply:
        raise NotImplementedError

    def stream(self, behaviour: str, request: Json, params: dict[str, str]) -> Reply:
        raise NotImplementedError

    def other(self, method: str, path: str) -> Reply:
        """Any request that is not a model call: an empty JSON object, or 404."""
        return Reply(404, {"error": f"the fake model service has no {method} {path}"})

    def reply(self, behaviour: str, request: Json, params: dict[str, str]) -> Reply:
        if behaviour in ERROR_STATUS:
            return self.error(ERROR_STATUS[behaviour])
        return self.stream(behaviour, request, params)


class OpenAIResponses(Api):
    """``POST /v1/responses`` with ``stream: true``: typed SSE events ending in response.completed."""

    name = "openai-responses"
    model_paths = ("/v1/responses",)

    def error(self, status: int) -> Reply:
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key", 400: "invalid_request_error"}.get(
            status, "server_error"
        )
        return Reply(status, {"error": {"type": kind, "code": kind, "message": f"fake model service: HTTP {status}"}})

    def stream(self, behaviour: str, request: Json, params: dict[str, str]) -> Reply:
        model = request.get("model", "gpt-fake") if isinstance(request, dict) else "gpt-fake"
        response: Json = {"id": "resp_fake", "object": "response", "created_at": 0, "model": model, "output": []}
        events: list[tuple[str, Json]] = [
            ("response.created", {"response": {**response, "status": "in_progress"}}),
            ("response.in_progress", {"response": {**response, "status": "in_progress"}}),
        ]
        if behaviour == "tool-use-loop":
            call = {
                "type": "function_call",
                "id": "fc_fake",
                "call_id": "call_fake",
                "name": "shell",
                "arguments": json.dumps({"command": ["cat", params.get("file_path", "hello.txt")]}),
                "status": "completed",
            }
            events += [
                ("response.output_item.added", {"output_index": 0, "item": {**call, "status": "in_progress"}}),
                ("response.output_item.done", {"output_index": 0, "item": call}),
            ]
            output: list[Json] = [call]
        else:
            text = params.get("text", DEFAULT_TEXT)
            message: Json = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "in_progress"}
            message["content"] = []
            part = {"type": "output_text", "text": text, "annotations": []}
            events += [
                ("response.output_item.added", {"output_index": 0, "item": message}),
                (
                    "response.content_part.added",
                    {"item_id": "msg_fake", "output_index": 0, "content_index": 0, "part": {**part, "text": ""}},
                ),
                (
                    "response.output_text.delta",
                    {"item_id": "msg_fake", "output_index": 0, "content_index": 0, "delta": text},
                ),
            ]
            if behaviour in ("stream-cut", "stream-stalled"):
                return Reply(events=_typed(events), stall=behaviour == "stream-stalled")
            done = {**message, "status": "completed", "content": [part]}
            events += [
                (
                    "response.output_text.done",
                    {"item_id": "msg_fake", "output_index": 0, "content_index": 0, "text": text},
                ),
                (
                    "response.content_part.done",
                    {"item_id": "msg_fake", "output_index": 0, "content_index": 0, "part": part},
                ),
                ("response.output_item.done", {"output_index": 0, "item": done}),
            ]
            output = [done]
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        completed = {**response, "status": "completed", "output": output, "usage": usage}
        events.append(("response.completed", {"response": completed}))
        return Reply(events=_typed(events))


class AnthropicMessages(Api):
    """``POST /v1/messages`` with ``stream: true``: message_start … message_stop."""

    name = "anthropic-messages"
    model_paths = ("/v1/messages",)

    def error(self, status: int) -> Reply:
        kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}.get(
            status, "api_error"
        )
        return Reply(
            status, {"type": "error", "error": {"type": kind, "message": f"fake model service: HTTP {status}"}}
        )

    def other(self, method: str, path: str) -> Reply:
        # Claude Code 2.1.220 greets its base URL (GET /api/hello) before the first call.
        return Reply(200, {}) if path.startswith("/api/hello") else super().other(method, path)

    def stream(self, behaviour: str, request: Json, params: dict[str, str]) -> Reply:
        model = request.get("model", "claude-fake") if isinstance(request, dict) else "claude-fake"
        message: Json = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        events: list[tuple[str, Json]] = [("message_start", {"message": message})]
        if behaviour == "tool-use-loop":
            block = {"type": "tool_use", "id": "toolu_fake", "name": "Read", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps({"file_path": params.get("file_path", "")})}
            stop = "tool_use"
        else:
            text = params.get("text", DEFAULT_TEXT)
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": text}
            stop = "end_turn"
        events += [
            ("content_block_start", {"index": 0, "content_block": block}),
            ("content_block_delta", {"index": 0, "delta": delta}),
        ]
        if behaviour in ("stream-cut", "stream-stalled"):
            return Reply(events=_typed(events), stall=behaviour == "stream-stalled")
        events += [
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
            ("message_stop", {}),
        ]
        return Reply(events=_typed(events))


def _typed(events: list[tuple[str, Json]]) -> tuple[tuple[str, Json], ...]:
    """Both APIs repeat the SSE event name as the payload's ``type``."""
    return tuple((name, {"type": name, **payload}) for name, payload in events)


APIS: dict[str, Api] = {api.name: api for api in (OpenAIResponses(), AnthropicMessages())}


@dataclass
class ModelServer:
    """A fake model service playing ``behaviour`` on 127.0.0.1; use it as a context manager."""

    api: str
    behaviour: str
    params: dict[str, str] = field(default_factory=dict)
    requests: list[Exchange] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if self.api not in APIS:
            raise ValueError(f"unknown model API {self.api!r}; known: {', '.join(APIS)}")
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown model behaviour {self.behaviour!r}; known: {', '.join(BEHAVIOURS)}")

    @property
    def port(self) -> int:
        assert self._server is not None, "the model server is not started"
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def model_calls(self) -> list[Exchange]:
        return [r for r in self.requests if r.path.split("?")[0] in APIS[self.api].model_paths]

    def start(self) -> ModelServer:
        self.stopping.clear()
        server = _Server(("127.0.0.1", 0), _handler(self))
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name=f"model-{self.api}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # releases a stalled stream
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._server = self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, method: str, path: str, body: Json) -> Reply:
        self.requests.append(Exchange(method, path, body))
        api = APIS[self.api]
        if method == "POST" and path.split("?")[0] in api.model_paths:
            return api.reply(self.behaviour, body, self.params)
        return api.other(method, path)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its connection (a product giving up, or being killed) is normal here."""


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read server.requests
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Json = json.loads(raw) if raw else None
            except ValueError:
                body = {"raw": raw.decode("utf-8", "replace")}
            reply = server.answer(self.command, self.path, body)
            if not reply.events:
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                return
            # An SSE body delimited by the connection's close: a cut stream is then a plain
            # close before the API's final event, as a dropped upstream connection looks.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in sse(reply.events):
                self.wfile.write(chunk)
                self.wfile.flush()
            if reply.stall:
                server.stopping.wait()  # silent until stop(); the client's idle timeout ends the call first

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve  # http.server's naming

    return Handler


def sse(events: tuple[tuple[str, Json], ...]) -> Iterator[bytes]:
    """Server-sent events, one ``event:``/``data:`` pair each."""
    for name, payload in events:
        yield f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()
