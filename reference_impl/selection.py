"""Output selection: the child's final output is its last non-empty assistant message,
else the text it streamed; an empty (usage-only) message never counts.

One incremental fold serves every consumer, so all observers of a run agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ContentBlock = dict[str, Any]
Event = Mapping[str, Any]


def joined_stream_text(stream: Iterable[Mapping[str, Any]]) -> str:
    """The text an embedded assistant stream carried: packed text runs and raw text deltas."""
    parts: list[str] = []
    for record in stream:
        kind = record["type"]
        if kind == "text-chunks":
            parts.extend(record["texts"])
        elif kind == "chunk":
            chunk = record["chunk"]
            if chunk["type"] == "text-delta":
                parts.append(chunk["text"])
    return "".join(parts)


class AssistantOutputFold:
    """Fold a child's events (or raw streamed text) into its final output.

    ``binding`` says where streamed text lives: ``chunk-events`` (``assistant/chunk``
    text deltas), ``embedded-stream`` (``data.stream`` of ``assistant/message`` and
    ``assistant/attempt``) or ``text-stream`` (raw text pushed with :meth:`push_text`).
    """

    __slots__ = ("_binding", "_message", "_partial")

    def __init__(self, binding: str) -> None:
        if binding not in ("chunk-events", "embedded-stream", "text-stream"):
            raise ValueError(f"unknown selection binding {binding!r}")
        self._binding = binding
        self._message: list[ContentBlock] | None = None
        self._partial: list[str] = []

    def push(self, event: Event) -> None:
        kind = event["type"]
        if kind == "assistant/message":
            data = event["data"]
            content = data["message"]["content"]
            if content:
                self._message = content
            if self._binding == "embedded-stream":
                self.push_text(joined_stream_text(data.get("stream") or ()))
        elif kind == "assistant/chunk":
            if self._binding == "chunk-events":
                chunk = event["data"]["chunk"]
                if chunk["type"] == "text-delta" and chunk["text"]:
                    self._partial.append(chunk["text"])
        elif kind == "assistant/attempt" and self._binding == "embedded-stream":
            self.push_text(joined_stream_text(event["data"].get("stream") or ()))

    def push_many(self, events: Sequence[Event]) -> None:
        """Fold a batch of events: the same result as pushing them one by one, faster.

        A finished child's log usually ends with its answer: when the batch's last
        assistant message is non-empty it is the selection, and nothing before it can
        change that. Otherwise one forward pass keeps the last non-empty message and the
        streamed text together.
        """
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            if event["type"] == "assistant/message":
                content = event["data"]["message"]["content"]
                if content:
                    self._message = content
                    return
                break
        binding = self._binding
        message = self._message
        texts: list[str] = []
        for event in events:
            kind = event["type"]
            if kind == "assistant/chunk":
                if binding == "chunk-events":
                    chunk = event["data"]["chunk"]
                    if chunk["type"] == "text-delta":
                        texts.append(chunk["text"])
            elif kind == "assistant/message":
                data = event["data"]
                content = data["message"]["content"]
                if content:
                    message = content
                if binding == "embedded-stream":
                    texts.append(joined_stream_text(data.get("stream") or ()))
            elif kind == "assistant/attempt" and binding == "embedded-stream":
                texts.append(joined_stream_text(event["data"].get("stream") or ()))
        self._message = message
        if message is None:
            self.push_text("".join(texts))

    def push_step(self, step: Mapping[str, Any]) -> None:
        """A fold step as the adapter protocol writes it: ``{"event": …}`` or ``{"text": …}``."""
        if "event" in step:
            self.push(step["event"])
        else:
            self.push_text(step["text"])

    def push_text(self, text: str) -> None:
        if text:
            self._partial.append(text)

    def collect(self) -> list[ContentBlock] | None:
        """The output so far; ``None`` when the child produced none (not ``[]``)."""
        if self._message is not None:
            return list(self._message)
        text = "".join(self._partial)
        return [{"type": "text", "text": text}] if text else None


def final_assistant_output(events: Iterable[Event], binding: str) -> list[ContentBlock] | None:
    """Apply the rule to a whole child-owned event suffix."""
    fold = AssistantOutputFold(binding)
    fold.push_many(list(events))
    return fold.collect()


def collected_after_each(fold: AssistantOutputFold, steps: Iterable[Mapping[str, Any]]) -> list[Any]:
    """What an observer collecting after every step sees."""
    values = []
    for step in steps:
        fold.push_step(step)
        values.append(fold.collect())
    return values
