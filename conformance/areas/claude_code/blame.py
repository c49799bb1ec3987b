"""Which requirement a wrong claude_code_outcome answer breaks: the diagnosis beside the oracle.

:func:`ClaudeDiagnosis.diagnose` compares the result the spec gives (the oracle of
conformance.areas.claude_code.oracle, which decides by the rows of table result_classification)
with the adapter's, field by field, and names for each differing field the rule that decides it: the classification
row's requirement for stage and category, the process-outcome rules for exit code and signal,
the permission rules for the permission line. Raw scenario text found in a text names the
rule of the field it was copied from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.areas.claude_code.oracle import decide, expected_outcome, tables
from conformance.areas.codex.blame import DECOY, leaks, raw_strings, replaced
from conformance.areas.diagnostic.text_blame import Finding, result_findings

Json = dict[str, Any]
Outcome = Callable[[Json], Json]

INVALID_SUCCESS = "invalid-success"


class ClaudeDiagnosis:
    """The rules of claude-code.yaml a difference between two results shows broken."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.outcome: Outcome | None = None  # the adapter's, while a diagnosis probes with it
        # The stages only start() reports (table stages: they surface in no run result); the run
        # claude_code_outcome settles is published, so its failure is never one of them (CC-035).
        self.startup_stages = {
            r["stage"]
            for r in spec.table("claude-code", "stages").rows
            if "run-result" not in r["surfaces_in"] and "dispose-rejection" not in r["surfaces_in"]
        }

    def diagnose(self, scenario: Json, expected: Json, actual: Json, outcome: Outcome | None = None) -> list[str]:
        """Every requirement whose rule tells ``expected`` from ``actual``; ``outcome``, the
        adapter's claude_code_outcome, confirms which raw field a copied text came from."""
        self.outcome = outcome
        row = decide(self.spec, scenario).row
        out: list[str] = []
        stop_differs = expected["stopReason"] != actual.get("stopReason")
        if stop_differs and actual.get("stopReason") not in tables(self.spec).stop_reasons:
            out.append("CC-003")  # a stop reason no situation of table stop_reasons settles with
        elif stop_differs:
            out += self.stop_rules(row, expected, actual)
        elif expected.get("output") != actual.get("output"):
            out += self.output_rules(scenario, expected)
        findings = result_findings(expected.get("diagnostic"), actual.get("diagnostic"))
        classified_otherwise = any(f.aspect in ("stage", "category") for f in findings)
        startup = _field(actual.get("diagnostic"), "stage") in self.startup_stages
        for f in findings:
            if f.aspect == "diagnostic" and stop_differs:
                continue  # its presence follows from the stop reason
            if f.aspect.startswith("permission") and classified_otherwise:
                continue  # the latest fact is the one at classification, which happened elsewhere
            if f.aspect in ("stage", "category") and startup:
                out.append("CC-035")  # a published run's failure reported as a start-up failure
                continue
            out += self.finding_rules(scenario, row, f)
        return list(dict.fromkeys(out)) or ["CC-007"]

    @staticmethod
    def stop_rules(row: Json, expected: Json, actual: Json) -> list[str]:
        if "aborted" in (expected["stopReason"], actual.get("stopReason")):
            return ["CC-024"]
        got_category = _field(actual.get("diagnostic"), "category")
        if expected["stopReason"] == "completed" and got_category == INVALID_SUCCESS:
            return ["CC-011"]  # a content result judged blank
        if expected["stopReason"] == "completed":
            return ["CC-013"]
        if actual.get("stopReason") == "completed":
            return list(row["requirement"])  # the rule the row states (its requirement column)
        return ["CC-003"]

    @staticmethod
    def output_rules(scenario: Json, expected: Json) -> list[str]:
        if expected["stopReason"] != "completed":
            return ["CC-023"]
        return ["CC-012"]

    def finding_rules(self, scenario: Json, row: Json, f: Finding) -> list[str]:
        if f.aspect == "diagnostic":
            return ["DIA-014", "CC-012"] if f.expected is None else ["CC-023"]
        if f.aspect in ("stage", "category"):
            if f.actual in ("process", "process-exit"):  # process-exit without its preconditions
                rules = ["CC-016"]
                if row["step"] == 2 or row["name"] == "missing-result":
                    rules.append("CC-017")  # over a classified failure
                if row["step"] == 2 and "exception" in scenario:
                    rules.append("CC-014")  # the exception came after the first failing result
                return rules
            if row["step"] == 2 and "exception" in scenario and self.exception_decided(scenario):
                return ["CC-014"]  # the exception after the first failing result decided instead
            if f.actual == INVALID_SUCCESS or f.expected == INVALID_SUCCESS:
                return ["CC-011"]
            return list(row["requirement"])  # the rule the row states (its requirement column)
        if f.aspect == "HTTP status":
            return ["CC-004", "DIA-008"]
        if f.aspect in ("exit code", "signal"):
            if f.aspect == "exit code" and f.expected == "0":
                return ["CC-021", "DIA-006"]
            if f.beside_other:
                return ["CC-017", "DIA-005"]
            if f.expected is None:
                return ["CC-020", "DIA-010"]
            return ["CC-020"]
        if f.aspect == "product":
            return ["DIA-001"]
        if f.aspect in ("order", "unparseable"):
            # A copied raw field is the leak of its source (its rule alone); else the grammar rule.
            return self.leak_rules(scenario, f.actual or "", f.expected or "") or ["RED-002"]

        if f.aspect == "permission-order":
            return ["CC-027", "DIA-012"]
        if f.aspect == "permission-count":
            return ["CC-025", "CC-027", "DIA-013"]
        t = tables(self.spec)
        bypass = scenario["mode"] not in t.facts["canUseTool"]["modes"]
        if f.expected is None:
            return ["CC-026"] if bypass else ["CC-027"]
        if bypass and self.trigger_of(f.actual) != self.trigger_of(f.expected):
            return ["CC-026"]  # a canUseTool fact recorded, or a trigger that fires in every mode lost
        if f.actual is None:
            return ["CC-025"]
        return ["CC-025", "DIA-013"]

    def trigger_of(self, line: str | None) -> str | None:
        """The permission_facts trigger whose line (its request, decision and reason) ``line`` is."""
        for trigger, row in tables(self.spec).facts.items():
            tail = f"; request: {row['request']}; decision: {row['decision']}): {row['reason']}"
            if line is not None and line.endswith(tail):
                return str(trigger)
        return None

    def exception_decided(self, scenario: Json) -> bool:
        """Whether the adapter gets the scenario right once the exception that followed its failed
        result is taken away (the real SDK throws one after every failed result): then that
        exception, which CC-014 says is not considered, is what changed the answer."""
        if self.outcome is None:
            return False
        without = {k: v for k, v in scenario.items() if k != "exception"}
        return self.outcome(without) == expected_outcome(self.spec, without)

    @staticmethod
    def source_rules(path: str) -> list[str]:
        """The rule that says the raw field at ``path`` of a scenario never reaches a text."""
        if path.startswith("exception"):
            return ["CC-016"]  # the exception's text never appears
        if ".errors" in path:
            return ["CC-008"]
        if ".subtype" in path:
            return ["CC-009"]
        if "callback" in path or "permission_denied" in path:
            return ["CC-025"]  # nothing from a trigger's arguments or fields enters the fact
        return ["RED-001"]  # no forbidden source reaches a text: a field no narrower rule names

    def leak_rules(self, scenario: Json, text: str, allowed: str) -> list[str]:
        """The rule of each raw scenario field whose text was copied into ``text``: a field of
        the events, or a line of the exception's message (which may embed the CLI's stderr).
        With the adapter's claude_code_outcome (``self.outcome``), a candidate is a source only
        when a decoy put in its place shows up in the diagnostic (as in codex/blame.py)."""
        probe = self.outcome
        out = []
        candidates = leaks(scenario, text, "" if probe else allowed, shortest=0 if probe else 4, trimmed=bool(probe))
        for path, value in candidates:
            if probe is not None:
                twin = replaced(scenario, path, value, DECOY)
                if path.endswith(".callback") or twin == scenario or DECOY not in _diagnostic(probe(twin)):
                    continue  # a callback name (it shapes the input), a key, or a string not copied
            out += self.source_rules(path)
        if probe is not None and not out:
            # A copied object or array (its repr, say) holds no raw string verbatim: put a decoy
            # string in place of each container of a message's fields and see which one shows up.
            # A decoy string, then a container of its own kind holding the decoy (a port may copy
            # only the objects of an array, and a decoy string in an object's place is not one).
            for path, child in _containers(scenario.get("events", []), "events"):
                shaped: Any = {DECOY: DECOY} if isinstance(child, dict) else [DECOY]
                if any(
                    DECOY in _diagnostic(probe({**scenario, "events": _put(scenario["events"], path, decoy)}))
                    for decoy in (DECOY, shaped)
                ):
                    out += self.source_rules(path)
        message = scenario.get("exception", {}).get("message") if isinstance(scenario.get("exception"), dict) else None
        if isinstance(message, str):
            if probe is not None:
                copied = message in text and DECOY in _diagnostic(probe({**scenario, "exception": {"message": DECOY}}))
            else:
                lines = [message, *(line.strip() for line in message.splitlines())]
                copied = any(len(line) >= 4 and line in text and line not in allowed for line in lines)
            if copied:
                out += self.source_rules("exception.message")
        return list(dict.fromkeys(out))

    def copied_rules(self, scenario: Json, text: str, outcome: Outcome) -> list[str]:
        """The rule of each raw field ``text`` copies, confirmed with the adapter's ``outcome``."""
        self.outcome = outcome
        return self.leak_rules(scenario, text, "")

    def canary_rules(self, scenario: Json, canary: str) -> list[str]:
        """The rule of each raw field of ``scenario`` that holds ``canary`` (RED-008 when none does)."""
        out = [r for path, value in raw_strings(scenario) if canary in value for r in self.source_rules(path)]
        return list(dict.fromkeys(out)) or ["RED-008"]


def _containers(value: Any, path: str, depth: int = 0) -> list[tuple[str, Any]]:
    """The paths of the objects and arrays inside the events' message fields (not the events or
    messages themselves), outermost first, each with what it holds."""
    found: list[tuple[str, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        here = f"{path}.{key}" if isinstance(value, dict) else f"{path}[{key}]"
        if isinstance(child, (dict, list)):
            if depth >= 2:  # events[i] . message . field: a field's value, and what it holds
                found.append((here, child))
            found += _containers(child, here, depth + 1)
    return found


def _put(value: Any, target: str, new: Any, path: str = "events") -> Any:
    """``value`` (walked from ``path``) with whatever is at ``target`` replaced by ``new``."""
    if path == target:
        return new
    if isinstance(value, list):
        return [_put(v, target, new, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _put(v, target, new, f"{path}.{k}") for k, v in value.items()}
    return value


def _diagnostic(result: Any) -> str:
    return str(result.get("diagnostic", "")) if isinstance(result, dict) else ""


def _field(text: str | None, label: str) -> str | None:
    _, found, rest = (text or "").partition(f"; {label}: ")
    return rest.split(";")[0].split(")")[0] if found else None
