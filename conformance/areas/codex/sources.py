"""Which rule owns each raw field of a Codex scenario: the requirement that says the field's
content never reaches a text, so that a leak is blamed on the source it leaked from, wherever
the test planted it.

A field is named by its path in the scenario's events (``events[3].frame.params.turn.error.message``,
as :func:`conformance.areas.codex.blame.leaks` gives it); :meth:`SourceRules.rules` reads the
event the path starts in and names the rule of codex.yaml (or redaction.yaml) for that field.
"""

from __future__ import annotations

import re
from typing import Any

Json = dict[str, Any]
_EVENT = re.compile(r"^events\[(\d+)\]")
GENERAL = ["CDX-072"]  # no raw product text in any Codex text: the rule of a field no narrower rule names


class SourceRules:
    """The rule of each raw field of a scenario, read from the spec's vocabularies."""

    def __init__(self, spec: Any) -> None:
        self.objects = {str(v) for v in spec.vocabulary("codex.variant_object").values}
        self.newer = {str(v) for v in spec.vocabulary("codex.newer_variant").values}
        self.http = {str(v) for v in spec.vocabulary("codex.http_status_variant").values}
        self.server_requests = {str(v) for v in spec.vocabulary("codex.server_request").values}

    def rules(self, request: Json, path: str) -> list[str]:
        """The rule that says the content at ``path`` of ``request`` never reaches a text."""
        match = _EVENT.match(path)
        if match is None:
            return GENERAL
        event = request["events"][int(match.group(1))]
        rest = path[match.end() :]
        if rest.endswith((".threadId", ".turnId")) or rest.startswith(".turn_start.result.turn.id"):
            return ["CDX-058"]  # thread and turn ids never appear in a text
        if "stderr" in event:
            return ["CDX-041", "RED-006"]  # no stderr byte is ever copied
        if "turn_start" in event:
            return ["CDX-027"]  # nothing of the turn/start error response is copied
        frame = event.get("frame")
        if not isinstance(frame, dict):
            return GENERAL
        return self.frame_rules(frame, rest.removeprefix(".frame"))

    def frame_rules(self, frame: Json, rest: str) -> list[str]:
        method = frame.get("method")
        if method is None:
            return ["CDX-051"]  # a response nobody waits for is ignored, its error included
        if "id" in frame:  # a server request: a supported one's payload never enters its fact
            return ["CDX-036"] if method in self.server_requests else ["CDX-034"]
        if method == "turn/completed":
            return self.terminal_rules(frame, rest)
        if method == "item/completed":
            item = frame.get("params", {}).get("item") if isinstance(frame.get("params"), dict) else None
            if isinstance(item, dict) and item.get("status") == "declined":
                return ["CDX-036"]  # a declined item's command, paths and patch never enter the fact
            return GENERAL
        return ["CDX-023"]  # every other notification is ignored, the `error` notification included

    def terminal_rules(self, frame: Json, rest: str) -> list[str]:
        """A field of a turn/completed frame: the error info's value (CDX-006; inside a known object
        variant's detail CDX-005, or CDX-004 for the httpStatusCode of the four connection and
        stream variants), else a field the mapping never reads (CDX-009)."""
        head = ".params.turn.error.codexErrorInfo"
        if not rest.startswith(head):
            return ["CDX-009"]
        turn = frame.get("params", {}).get("turn", {})
        info = turn.get("error", {}).get("codexErrorInfo")
        inner = rest[len(head) :]
        if isinstance(info, dict) and len(info) == 1:
            [(name, detail)] = info.items()
            if name in self.objects and isinstance(detail, dict) and inner.startswith(f".{name}."):
                if name in self.http and inner.startswith(f".{name}.httpStatusCode"):
                    return ["CDX-004"]  # only an integral number is kept, as a status, never copied
                return ["CDX-005"]  # nothing else inside a known variant's detail is read or exposed
            if name in self.newer:
                return ["CDX-008"]
        if isinstance(info, str) and info in self.newer:
            return ["CDX-008"]
        return ["CDX-006"]  # a value outside the union is never copied
