"""The oracle for codex_outcome: what spec/codex.yaml and the line formats of spec/diagnostic.yaml
make of a Codex run's texts and stop reasons.

Everything it says is read from the spec's rows and vocabularies (variants, stop_reasons,
permission_facts, failure_line_fields), so no test restates a rule the spec already tabulates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.areas.codex.scenarios import Json


@dataclass(frozen=True)
class Fact:
    """One row of table permission_facts."""

    request: str
    decision: str
    reason: str


class CodexOracle:
    """What codex.yaml and diagnostic.yaml say about the texts and stop reasons of a Codex run."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        [products] = [r for r in spec.table("diagnostic", "products").rows if r["area"] == "codex"]
        self.product: str = products["product"]
        fields = sorted(spec.table("diagnostic", "failure_line_fields").rows, key=lambda r: r["order"])
        self.labels = [r["label"] for r in fields]
        self.variants = {r["variant"]: r for r in spec.table("codex", "variants").rows}
        self.http_variants = list(spec.vocabulary("codex.http_status_variant").values)
        self.variant_names = set(spec.vocabulary("codex.variant").values)
        self.statuses = list(spec.vocabulary("codex.terminal_status").values)
        self.phases = list(spec.vocabulary("codex.agent_message_phase").values)
        self.modes = list(spec.vocabulary("codex.permission_mode").values)
        self.signatures = [str(v) for v in spec.vocabulary("codex.stderr_signature").values]
        self.signals = [str(v) for v in spec.vocabulary("diagnostic.signal").values]
        self.whitespace = {chr(c) for c in spec.vocabulary("claude-code.js_whitespace").values}
        self.facts = spec.table("codex", "permission_facts").rows
        # Every category outside the union settles like `unknown` (table stop_reasons).
        unknown_stops = {
            r["stop_reason"] for r in spec.table("codex", "stop_reasons").rows if r.get("category") == "unknown"
        }
        [self.unknown_stop] = unknown_stops

    # -- rows

    def fact_by_trigger(self, fragment: str) -> Fact:
        """The permission_facts row whose trigger names ``fragment`` (a method, signature or category)."""
        rows = [r for r in self.facts if fragment in r["trigger"]]
        assert len(rows) == 1, f"permission_facts has {len(rows)} rows whose trigger names {fragment!r}"
        return Fact(rows[0]["request"], rows[0]["decision"], rows[0]["reason"])

    def fact_by_decision(self, request: str, decision: str) -> Fact:
        rows = [r for r in self.facts if r["request"] == request and r["decision"] == decision]
        assert len(rows) == 1, f"permission_facts has {len(rows)} rows for {request}/{decision}"
        return Fact(request, decision, rows[0]["reason"])

    def signature_fact(self, signature: str) -> Fact:
        return self.fact_by_trigger(f'"{signature}"')

    # -- texts (diagnostic.yaml DIA-002, DIA-011, DIA-012)

    def failure_line(
        self,
        stage: str,
        category: str,
        http_status: int | None = None,
        exit_code: int | None = None,
        signal: str | None = None,
    ) -> str:
        values = {
            "product": self.product,
            "stage": stage,
            "category": category,
            "HTTP status": http_status,
            "exit code": exit_code,
            "signal": signal,
        }
        present = [f"{label}: {values[label]}" for label in self.labels if values[label] is not None]
        return "Product subagent failure (" + "; ".join(present) + ")"

    def permission_line(self, mode: str, fact: Fact) -> str:
        return (
            f"{self.product} unattended decision (mode: {mode}; request: {fact.request}; "
            f"decision: {fact.decision}): {fact.reason}"
        )

    def diagnostic(self, mode: str, line: str, fact: Fact | None) -> str:
        return line if fact is None else line + "\n" + self.permission_line(mode, fact)

    # -- readings

    def stop_reason(self, category: str) -> str:
        row = self.variants.get(category)
        return str(row["stop_reason"]) if row is not None else str(self.unknown_stop)

    def blank(self, text: str) -> bool:
        return all(ch in self.whitespace for ch in text)

    def selected_output(self, final: str | None, unphased: str | None) -> list[Json]:
        """Table answer_selection: the last final answer, else the last unphased one; [] when blank."""
        chosen = final if final is not None else unphased
        return [] if chosen is None or self.blank(chosen) else [{"type": "text", "text": chosen}]

    def fatal_agent_message(self, item: Any) -> bool:
        """Whether an item of the run's turn is a malformed agentMessage (notification_handling steps 9-10)."""
        if not isinstance(item, dict) or item.get("type") != "agentMessage":
            return False
        if not isinstance(item.get("text"), str):
            return True
        return "phase" not in item or not (item["phase"] is None or item["phase"] in self.phases)

    def failure(
        self,
        mode: str,
        output: list[Json],
        stage: str,
        category: str,
        *,
        http_status: int | None = None,
        exit_code: int | None = None,
        signal: str | None = None,
        fact: Fact | None = None,
        replies: list[Json] | None = None,
    ) -> Json:
        line = self.failure_line(stage, category, http_status, exit_code, signal)
        return {
            "stopReason": self.stop_reason(category),
            "output": output,
            "diagnostic": self.diagnostic(mode, line, fact),
            "replies": replies or [],
        }


def js_uint16(value: Any) -> int | None:
    """The status CDX-004 keeps: a JSON number (never a boolean) with an integral value 0..65535.
    Checked against every row of table http_status_forms before it is used as an oracle."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 0 <= value <= 65535 else None
