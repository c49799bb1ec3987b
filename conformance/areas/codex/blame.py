"""Which requirement a wrong codex_outcome answer breaks: the diagnosis beside the oracle.

:func:`diagnose` compares the result the spec gives with the adapter's, field by field
(stopReason, output, diagnostic — its failure line field by field and its permission line —
and replies), and names for each differing field the requirement whose rule decides it,
reading the scenario for what that rule depends on (the terminal's status and error info, the
permission triggers observed). :func:`leaks` finds raw scenario text copied into a text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from conformance.areas.diagnostic.text_blame import Finding, result_findings

Json = dict[str, Any]
THREAD_ID, TURN_ID = "thread-1", "turn-1"


def comparable(result: Json) -> Json:
    """The answer as the oracle compares it: a JSON-RPC error's message is the provider's choice
    (CDX-035), so it is left out of the comparison (the redaction tests still read it)."""
    replies = []
    for reply in result.get("replies", []):
        if isinstance(reply.get("error"), dict):
            reply = {**reply, "error": {k: v for k, v in reply["error"].items() if k != "message"}}
        replies.append(reply)
    return {**result, "replies": replies}


class CodexDiagnosis:
    """The rules of codex.yaml a difference between two results shows broken."""

    def __init__(self, spec: Any) -> None:
        self.union = {str(v) for v in spec.vocabulary("codex.variant").values}
        self.strings = {str(v) for v in spec.vocabulary("codex.variant_string").values}
        self.objects = {str(v) for v in spec.vocabulary("codex.variant_object").values}
        self.newer = {str(v) for v in spec.vocabulary("codex.newer_variant").values}
        self.http = {str(v) for v in spec.vocabulary("codex.http_status_variant").values}
        self.statuses = {str(v) for v in spec.vocabulary("codex.terminal_status").values}
        self.signatures = [str(v) for v in spec.vocabulary("codex.stderr_signature").values]

    # -- what the scenario holds

    def terminal(self, request: Json) -> Json | None:
        """The turn of the first turn/completed of the run's thread and turn, if any."""
        for event in request["events"]:
            frame = event.get("frame")
            if not isinstance(frame, dict) or frame.get("method") != "turn/completed":
                continue
            params = frame.get("params")
            if isinstance(params, dict) and params.get("threadId") == request["thread_id"]:
                turn = params.get("turn")
                if isinstance(turn, dict):
                    return turn
        return None

    def triggers(self, request: Json) -> int:
        """About how many permission facts the scenario can record (server requests, declined
        items, stderr signatures, a sandboxError terminal): more than one makes a wrong fact a
        question of order (CDX-037), one a question of the trigger's row (CDX-036)."""
        frames = [e["frame"] for e in request["events"] if isinstance(e.get("frame"), dict)]
        count = sum(1 for frame in frames if "id" in frame and "method" in frame)  # server requests
        count += sum(1 for frame in frames if frame.get("method") == "item/completed" and "declined" in str(frame))
        stream = "".join(str(e["stderr"]) for e in request["events"] if "stderr" in e)
        count += sum(stream.count(s) for s in self.signatures)
        turn = self.terminal(request)
        if turn is not None and "sandboxError" in str(turn.get("error")):
            count += 1
        return count

    def category_rules(self, request: Json) -> list[str]:
        """The rule that decides the category of the run's terminal (or of its other failure)."""
        turn = self.terminal(request)
        if turn is None:
            return ["CDX-010"]
        status = turn.get("status")
        if status not in self.statuses:
            return ["CDX-026"]
        if status != "failed":
            return ["CDX-007"]
        error = turn.get("error")
        info = error.get("codexErrorInfo", ...) if isinstance(error, dict) else ...
        if isinstance(info, str):
            return ["CDX-002"] if info in self.strings else ["CDX-008"] if info in self.newer else ["CDX-006"]
        if isinstance(info, dict) and len(info) == 1:
            [(name, detail)] = info.items()
            if name in self.newer:
                return ["CDX-008"]
            if name in self.objects:
                return ["CDX-003"] if isinstance(detail, dict) else ["CDX-003", "CDX-006"]
            return ["CDX-006"]
        if isinstance(info, dict) and len(info) > 1:
            return ["CDX-003", "CDX-006"]
        return ["CDX-006"]

    # -- the diagnosis

    def diagnose(self, request: Json, expected: Json, actual: Json) -> list[str]:
        """Every requirement whose rule tells ``expected`` from ``actual`` (after comparable())."""
        out: list[str] = []
        stop_differs = expected.get("stopReason") != actual.get("stopReason")
        if stop_differs:
            out += self.stop_reason_rules(request, expected, actual)
        if expected.get("output") != actual.get("output"):
            out += self.output_rules(expected, actual)
        findings = result_findings(expected.get("diagnostic"), actual.get("diagnostic"))
        for f in findings:
            if f.aspect == "diagnostic" and stop_differs:
                continue  # the diagnostic's presence follows from the stop reason
            out += self.finding_rules(request, expected, f)
        if expected.get("replies") != actual.get("replies"):
            out += self.reply_rules(expected.get("replies", []), actual.get("replies", []))
        return list(dict.fromkeys(out)) or ["CDX-074"]

    def stop_reason_rules(self, request: Json, expected: Json, actual: Json) -> list[str]:
        want, got = expected["stopReason"], actual["stopReason"]
        turn = self.terminal(request)
        if want == "aborted" or (got == "aborted" and not request.get("cancelled")):
            if turn is not None and turn.get("status") == "interrupted":
                return ["CDX-012"]
            return ["CDX-016"]
        if want == "completed" or got == "completed":
            if turn is not None and turn.get("status") == "completed":
                return ["CDX-022"] if want != "completed" else ["CDX-013"]
            return ["CDX-013"]
        if turn is not None and turn.get("status") == "interrupted":
            return ["CDX-012"]
        return ["CDX-011"]

    @staticmethod
    def output_rules(expected: Json, actual: Json) -> list[str]:
        want, got = expected.get("output") or [], actual.get("output") or []
        if want and got and want[0].get("text", "").strip() == got[0].get("text", "").strip():
            return ["CDX-020"]
        if want and not got and expected.get("stopReason") != "completed":
            return ["CDX-014"]
        return ["CDX-018"]

    def finding_rules(self, request: Json, expected: Json, f: Finding) -> list[str]:
        if f.aspect == "diagnostic":
            return ["DIA-014", "CDX-015"] if f.expected is None else ["CDX-014"]
        if f.aspect == "stage":
            return ["CDX-010"]
        if f.aspect == "category":
            return self.category_rules(request)
        if f.aspect == "HTTP status":
            return ["CDX-004"] if _category(expected) in self.http else ["DIA-008"]
        if f.aspect in ("exit code", "signal"):
            if f.expected is None:
                return ["DIA-010"]
            if f.aspect == "exit code" and f.expected == "0":
                return ["DIA-006"]
            if f.beside_other:
                return ["DIA-005"]
            return ["CDX-044"] if _stage(expected) == "process" else ["CDX-045"]
        if f.aspect == "product":
            return ["DIA-001"]
        if f.aspect in ("order", "unparseable"):
            return ["RED-002", *self.leak_rules(request, expected, f.actual or "")]
        if f.aspect == "permission-order":
            return ["DIA-012"]
        if f.aspect == "permission-count":
            return ["CDX-037", "DIA-013"]
        if f.expected is None or f.actual is None:
            return ["CDX-043"] if f.expected is None else ["CDX-036"]
        return ["CDX-037", "DIA-013"] if self.triggers(request) > 1 else ["CDX-036"]

    @staticmethod
    def reply_rules(want: list[Json], got: list[Json]) -> list[str]:
        if [r.get("id") for r in want] != [r.get("id") for r in got]:
            return ["CDX-035"] if len(want) == len(got) else ["CDX-031"]
        out = []
        for w, g in zip(want, got, strict=True):
            if ("error" in w) != ("error" in g):
                out.append("CDX-034")
            elif w != g:
                out.append("CDX-032" if "decision" in str(w) or "decision" in str(g) else "CDX-031")
        return out

    def leak_rules(self, request: Json, expected: Json, text: str) -> list[str]:
        """The rule of each raw scenario field whose text was copied into ``text``."""
        out = []
        for path, _ in leaks(request, text, str(expected.get("diagnostic", ""))):
            if "stderr" in path:
                out += ["CDX-041", "RED-006"]
            elif "turn" in path and ("message" in path or "additionalDetails" in path):
                out.append("CDX-009")
            else:
                out.append("CDX-072")
        return out


def _category(result: Json) -> str | None:
    text = str(result.get("diagnostic", ""))
    _, found, rest = text.partition("; category: ")
    return rest.split(";")[0].split(")")[0] if found else None


def _stage(result: Json) -> str | None:
    text = str(result.get("diagnostic", ""))
    _, found, rest = text.partition("; stage: ")
    return rest.split(";")[0] if found else None


def _strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield f"{path}.{k}", str(k)
            yield from _strings(v, f"{path}.{k}")


def leaks(request: Json, text: str, allowed: str, *, shortest: int = 4) -> list[tuple[str, str]]:
    """(path, value) of every raw string of the scenario (at least ``shortest`` characters) that
    ``text`` contains and the expected text ``allowed`` does not."""
    found = []
    for path, value in _strings(request.get("events", []), "events"):
        if len(value) >= shortest and value in text and value not in allowed:
            found.append((path, value))
    return found


def with_counterfactual(outcome: Callable[[Json], Json], request: Json, expected: Json, blamed: list[str]) -> list[str]:
    """CDX-023 when the difference is the `error` notification's doing: without those
    notifications (which the spec ignores, so the expected result stays the same) the adapter
    answers as the spec says."""
    kept = [
        e for e in request["events"] if not (isinstance(e.get("frame"), dict) and e["frame"].get("method") == "error")
    ]
    if len(kept) == len(request["events"]):
        return blamed
    if comparable(outcome({**request, "events": kept})) == expected:
        return ["CDX-023"]
    return blamed
