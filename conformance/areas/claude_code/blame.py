"""Which requirement a wrong claude_code_outcome answer breaks: the diagnosis beside the oracle.

:func:`ClaudeDiagnosis.diagnose` compares the result the spec gives (the oracle of
conformance.areas.claude_code.oracle, which decides by the rows of table result_classification)
with the adapter's, field by field, and names for each differing field the rule that decides it: the classification
row's requirement for stage and category, the process-outcome rules for exit code and signal,
the permission rules for the permission line. Raw scenario text found in a text names the
rule of the field it was copied from.
"""

from __future__ import annotations

from typing import Any

from conformance.areas.claude_code.oracle import decide, tables
from conformance.areas.codex.blame import leaks
from conformance.areas.diagnostic.text_blame import Finding, result_findings

Json = dict[str, Any]

INVALID_SUCCESS = "invalid-success"


class ClaudeDiagnosis:
    """The rules of claude-code.yaml a difference between two results shows broken."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def diagnose(self, scenario: Json, expected: Json, actual: Json) -> list[str]:
        row = decide(self.spec, scenario).row
        out: list[str] = []
        stop_differs = expected["stopReason"] != actual.get("stopReason")
        if stop_differs:
            out += self.stop_rules(row, expected, actual)
        elif expected.get("output") != actual.get("output"):
            out += self.output_rules(scenario, expected)
        findings = result_findings(expected.get("diagnostic"), actual.get("diagnostic"))
        classified_otherwise = any(f.aspect in ("stage", "category") for f in findings)
        for f in findings:
            if f.aspect == "diagnostic" and stop_differs:
                continue  # its presence follows from the stop reason
            if f.aspect.startswith("permission") and classified_otherwise:
                continue  # the latest fact is the one at classification, which happened elsewhere
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
            return ["RED-002", *self.leak_rules(scenario, f.actual or "", f.expected or "")]
        if f.aspect == "permission-order":
            return ["CC-027", "DIA-012"]
        if f.aspect == "permission-count":
            return ["CC-025", "CC-027", "DIA-013"]
        if f.expected is None:
            bypass = [m for m in tables(self.spec).modes if m not in tables(self.spec).facts["canUseTool"]["modes"]]
            return ["CC-026"] if scenario["mode"] in bypass else ["CC-027"]
        if f.actual is None:
            return ["CC-025"]
        return ["CC-025", "DIA-013"]

    @staticmethod
    def leak_rules(scenario: Json, text: str, allowed: str) -> list[str]:
        """The rule of each raw scenario field whose text was copied into ``text``."""
        out = []
        for path, _ in leaks(scenario, text, allowed):
            if ".errors" in path:
                out.append("CC-008")
            elif ".subtype" in path:
                out.append("CC-009")
            elif "callback" in path or "permission_denied" in path:
                out.append("CC-025")
            else:
                out.append("RED-001")
        if "exception" in scenario and str(scenario["exception"].get("message", "")) in text:
            out.append("CC-016")
        return out


def _field(text: str | None, label: str) -> str | None:
    _, found, rest = (text or "").partition(f"; {label}: ")
    return rest.split(";")[0].split(")")[0] if found else None
