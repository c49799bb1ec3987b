"""Which requirement a wrong codex_outcome answer breaks: the diagnosis beside the oracle.

:func:`diagnose` compares the result the spec gives with the adapter's, field by field
(stopReason, output, diagnostic — its failure line field by field and its permission line —
and replies), and names for each differing field the requirement whose rule decides it,
reading the scenario for what that rule depends on (the terminal's status and error info, the
permission triggers observed). :func:`leaks` finds raw scenario text copied into a text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from conformance.areas.codex.sources import SourceRules
from conformance.areas.diagnostic.text_blame import Finding, result_findings

Json = dict[str, Any]
Outcome = Callable[[Json], Json]
THREAD_ID, TURN_ID = "thread-1", "turn-1"
DECOY = "Decoy7f3q"  # put in place of a raw string: seen in a text only when copied


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
        self.outcome: Outcome | None = None  # the adapter's, while a diagnosis probes with it
        self.union = {str(v) for v in spec.vocabulary("codex.variant").values}
        self.strings = {str(v) for v in spec.vocabulary("codex.variant_string").values}
        self.objects = {str(v) for v in spec.vocabulary("codex.variant_object").values}
        self.newer = {str(v) for v in spec.vocabulary("codex.newer_variant").values}
        base = spec.areas["codex"].base_area or spec.areas["codex"]  # the union as the base version has it
        self.added = self.union - {str(v) for v in base.vocabularies["variant"].values}  # the claimed version adds
        self.http = {str(v) for v in spec.vocabulary("codex.http_status_variant").values}
        self.statuses = {str(v) for v in spec.vocabulary("codex.terminal_status").values}
        self.signatures = [str(v) for v in spec.vocabulary("codex.stderr_signature").values]
        self.whitespace = frozenset(chr(int(c)) for c in spec.vocabulary("claude-code.js_whitespace").values)
        self.sources = SourceRules(spec)

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
            if info in self.added:
                return ["CDX-077"]  # a member of the claimed version's union the base does not have
            return ["CDX-002"] if info in self.strings else ["CDX-008"] if info in self.newer else ["CDX-006"]
        if isinstance(info, dict) and len(info) == 1:
            [(name, detail)] = info.items()
            if name in self.added and isinstance(detail, dict):
                return ["CDX-077"]
            if name in self.newer:
                return ["CDX-008"]
            if name in self.objects:
                return ["CDX-003"] if isinstance(detail, dict) else ["CDX-003", "CDX-006"]
            return ["CDX-006"]
        if isinstance(info, dict) and len(info) > 1:
            return ["CDX-003", "CDX-006"]
        return ["CDX-006"]

    # -- the diagnosis

    def diagnose(self, request: Json, expected: Json, actual: Json, outcome: Outcome | None = None) -> list[str]:
        """Every requirement whose rule tells ``expected`` from ``actual`` (after comparable());
        ``outcome``, the adapter's codex_outcome, confirms which raw field a copied text came from."""
        self.outcome = outcome
        out: list[str] = self.blankness_rules(expected, actual)
        stop_differs = expected.get("stopReason") != actual.get("stopReason")
        if stop_differs and not out:
            out += self.stop_reason_rules(request, expected, actual)
        if expected.get("output") != actual.get("output") and not out:
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

    def blankness_rules(self, expected: Json, actual: Json) -> list[str]:
        """CDX-020 when the answer was judged blank by another whitespace set than trim()'s
        (vocabulary claude-code.js_whitespace): an answer Python's strip() empties but trim()
        keeps was dropped, or one that only trim() empties (U+FEFF) was kept; the stop reason
        and the diagnostic's presence follow from that judgement."""
        want, got = _answer(expected), _answer(actual)
        if want is not None and got is None and not want.strip():
            return ["CDX-020"]
        if got is not None and want is None and not expected.get("output") and got.strip():
            return ["CDX-020"] if all(ch in self.whitespace for ch in got) else []
        return []

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
            # A copied raw field is the leak of its source (its rule alone); else the grammar rule.
            return self.leak_rules(request, expected, f.actual or "") or ["RED-002"]
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
        """The rule of each raw scenario field whose text was copied into ``text`` (sources.py).
        A raw string found in the text is a source only when a decoy put in its place shows up in
        the diagnostic (probed with the adapter's codex_outcome, when the diagnosis has it): a
        word that merely also occurs in a copied one, an equal string elsewhere in the scenario,
        or a field the mapping reads (its decoy changes a fact, never appears) is not."""
        out = []
        # Probed, any string the text contains is a candidate (even one the expected text holds:
        # a message "no" is inside "unknown"); unprobed, only longer ones the expected text lacks.
        allowed = str(expected.get("diagnostic", "")) if self.outcome is None else ""
        for path, value in leaks(request, text, allowed, shortest=0 if self.outcome else 4, trimmed=bool(self.outcome)):
            if self.outcome is not None:
                if ".exit." in path:
                    continue  # a signal name: a value of the process outcome, never a raw string
                twin = replaced(request, path, value, DECOY)
                if twin == request or DECOY not in str(self.outcome(twin).get("diagnostic", "")):
                    continue  # a key (never probed: it shapes the input), or a string not copied
            out += self.sources.rules(request, path)
        return list(dict.fromkeys(out))


def _answer(result: Json) -> str | None:
    """The text of a result's one-block output, None when it has none."""
    output = result.get("output")
    if isinstance(output, list) and len(output) == 1 and isinstance(output[0], dict):
        text = output[0].get("text")
        return text if isinstance(text, str) else None
    return None


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


def replaced(value: Any, target: str, old: str, new: str, path: str = "events") -> Any:
    """``value`` (a scenario, walked as :func:`_strings` walks its events) with the string value
    ``old`` at ``target`` replaced by ``new`` (keys are kept)."""
    if path == "events" and isinstance(value, dict) and "events" in value:
        return {**value, "events": replaced(value["events"], target, old, new, path)}
    if isinstance(value, str):
        return new if path == target and value == old else value
    if isinstance(value, list):
        return [replaced(v, target, old, new, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            child = f"{path}.{k}"
            out[k] = replaced(v, target, old, new, child)
        return out
    return value


def raw_strings(request: Json) -> Iterator[tuple[str, str]]:
    """(path, value) of every string of the scenario's events (keys included) and of its exception."""
    yield from _strings(request.get("events", []), "events")
    if "exception" in request:
        yield from _strings(request["exception"], "exception")


def leaks(request: Json, text: str, allowed: str, *, shortest: int = 4, trimmed: bool = False) -> list[tuple[str, str]]:
    """(path, value) of every raw string of the scenario (at least ``shortest`` characters) that
    ``text`` contains (``trimmed``: without its surrounding whitespace) and the expected text
    ``allowed`` does not."""
    found = []
    for path, value in _strings(request.get("events", []), "events"):
        needle = value.strip() if trimmed else value
        if len(value) >= shortest and needle in text and not (allowed and value in allowed):
            found.append((path, value))
    return found


def _rule_of_ignored(
    outcome: Callable[[Json], Json], request: Json, expected: Json, ignored: Callable[[Json], bool], rule: str
) -> list[str] | None:
    """``[rule]`` when the difference is the doing of events the spec ignores: without them (so
    the expected result stays the same) the adapter answers as the spec says. None when it is not
    (probed), or when the scenario has none."""
    kept = [e for e in request["events"] if not ignored(e)]
    if len(kept) == len(request["events"]):
        return None
    return [rule] if comparable(outcome({**request, "events": kept})) == expected else None


def ignored_notification_rule(outcome: Callable[[Json], Json], request: Json, expected: Json) -> list[str] | None:
    """CDX-023 when the difference is the `error` notification's doing (the spec ignores it)."""

    def error_notification(event: Json) -> bool:
        return isinstance(event.get("frame"), dict) and event["frame"].get("method") == "error"

    return _rule_of_ignored(outcome, request, expected, error_notification, "CDX-023")


def foreign_line_rule(
    outcome: Callable[[Json], Json], request: Json, expected: Json, whitespace: str
) -> list[str] | None:
    """CDX-049 when the difference is the doing of stdout lines that are not frames: blank, not
    JSON as JSON.parse reads it (NaN and Infinity are not JSON), or not an object, once trimmed
    of ``whitespace`` (vocabulary claude-code.js_whitespace: what JavaScript's trim() removes)."""

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    def foreign(event: Json) -> bool:
        if not isinstance(event.get("line"), str):
            return False
        try:
            return not isinstance(json.loads(event["line"].strip(whitespace), parse_constant=refuse), dict)
        except ValueError:
            return True

    return _rule_of_ignored(outcome, request, expected, foreign, "CDX-049")


def without_unread_detail(request: Json, objects: set[str], http: set[str]) -> Json | None:
    """``request`` with every key the mapping never reads taken out of the detail of each
    turn/completed's known object variant (all but httpStatusCode of the four connection and
    stream variants, CDX-005), or None when there is none: the expected result stays the same."""
    events, changed = [], False
    for event in request["events"]:
        frame: Any = event.get("frame")
        params: Any = (
            frame.get("params") if isinstance(frame, dict) and frame.get("method") == "turn/completed" else None
        )
        turn: Any = params.get("turn") if isinstance(params, dict) else None
        error: Any = turn.get("error") if isinstance(turn, dict) else None
        info = error.get("codexErrorInfo") if isinstance(error, dict) else None
        if isinstance(info, dict) and len(info) == 1:
            [(name, detail)] = info.items()
            if name in objects and isinstance(detail, dict):
                read = {k: v for k, v in detail.items() if name in http and k == "httpStatusCode"}
                if read != detail:
                    changed = True
                    error = {**error, "codexErrorInfo": {name: read}}
                    event = {**event, "frame": {**frame, "params": {**params, "turn": {**turn, "error": error}}}}
        events.append(event)
    return {**request, "events": events} if changed else None


def unread_detail_rule(
    outcome: Callable[[Json], Json], request: Json, expected: Json, diagnosis: CodexDiagnosis
) -> list[str] | None:
    """CDX-005 when the difference is the doing of detail keys the mapping never reads: without
    them the adapter answers as the spec says. None when it is not (probed: a wrong answer with
    and without them stays the rule the diagnosis names, CDX-003 for a variant not recognised)."""
    stripped = without_unread_detail(request, diagnosis.objects, diagnosis.http)
    if stripped is not None and comparable(outcome(stripped)) == expected:
        return ["CDX-005"]
    return None
