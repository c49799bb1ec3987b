"""Scenario builders, strategies and the oracle for codex_outcome, built from spec/codex.yaml
(rows of its tables, its vocabularies) and the line formats of spec/diagnostic.yaml.

A scenario is what a Codex provider observed of one published run, in order (table
outcome_vectors); the oracle says what the spec makes of it. Generated values carry their own
expected reading (a wire form from table `variants` carries its variant, an HTTP status form
from table `http_status_forms` carries `kept`/`printed`), so no test restates a rule the
spec already tabulates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Json = dict[str, Any]

THREAD_ID = "thread-1"  # the run's thread and committed turn in the tables of codex.yaml
TURN_ID = "turn-1"


# ---- scenario builders: one observation each, in the shapes of table outcome_vectors


def response(turn_id: Any = TURN_ID) -> Json:
    """A valid turn/start response committing ``turn_id``."""
    return {"turn_start": {"result": {"turn": {"id": turn_id}}}}


def notification(method: str, params: Any) -> Json:
    return {"frame": {"method": method, "params": params}}


def item_completed(item: Any, turn_id: Any = TURN_ID, thread_id: Any = THREAD_ID) -> Json:
    return notification("item/completed", {"threadId": thread_id, "turnId": turn_id, "item": item})


def agent_message(text: Any, phase: Any, turn_id: Any = TURN_ID, thread_id: Any = THREAD_ID) -> Json:
    return item_completed({"type": "agentMessage", "text": text, "phase": phase}, turn_id, thread_id)


def terminal(turn: Json, thread_id: Any = THREAD_ID) -> Json:
    """A turn/completed notification carrying ``turn``."""
    return notification("turn/completed", {"threadId": thread_id, "turn": turn})


def failed_turn(error: Any, turn_id: Any = TURN_ID, status: Any = "failed") -> Json:
    """The ``turn`` of a terminal; ``error`` is turn.error, or ``...`` to leave the key out."""
    turn: Json = {"id": turn_id, "status": status}
    if error is not ...:
        turn["error"] = error
    return turn


def turn_error(info: Any, message: str = "fixture failure", **extra: Any) -> Json:
    """A TurnError; ``info`` is codexErrorInfo, or ``...`` to leave the key out."""
    error: Json = {"message": message, **extra}
    if info is not ...:
        error["codexErrorInfo"] = info
    return error


def server_request(request_id: Any, method: str, params: Any) -> Json:
    return {"frame": {"id": request_id, "method": method, "params": params}}


def process_exit(exit_code: int | None, signal: str | None) -> Json:
    return {"exit": {"exitCode": exit_code, "signal": signal}}


def scenario(events: list[Json], *, mode: str = "never", thread_id: str = THREAD_ID, cancelled: bool = False) -> Json:
    request: Json = {"mode": mode, "thread_id": thread_id, "events": events}
    if cancelled:
        request["cancelled"] = True
    return request


# ---- the oracle


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
        unknown_stops = {r["stop_reason"] for r in spec.table("codex", "stop_reasons").rows if r.get("category") == "unknown"}
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


# ---- strategies

_MISSING = ...


@dataclass(frozen=True)
class ErrorInfo:
    """A turn.error value and the category and HTTP status the spec reads from it."""

    error: Any  # turn.error, or ... for a missing key
    category: str
    http_status: int | None
    family: str


def http_forms(spec: Any) -> st.SearchStrategy[tuple[Any, int | None]]:
    """An httpStatusCode value (``...`` for a missing key) and the printed status."""
    rows = spec.table("codex", "http_status_forms").rows
    tabled = st.sampled_from([(r["value"] if r["present"] else _MISSING, r["printed"]) for r in rows])
    return st.one_of(
        tabled,
        st.integers(0, 65535).map(lambda n: (n, n)),
        st.integers(0, 65535).map(lambda n: (float(n), n)),
        st.one_of(st.integers(max_value=-1), st.integers(min_value=65536)).map(lambda n: (n, None)),
        st.floats(-1e6, 1e6).filter(lambda f: not f.is_integer()).map(lambda f: (f, None)),
        st.booleans().map(lambda b: (b, None)),
        st.integers(0, 65535).map(lambda n: (str(n), None)),
        st.just((None, None)),
        st.just((_MISSING, None)),
    )


def _detail_extras() -> st.SearchStrategy[Json]:
    """Extra keys in a known variant's detail (never read, CDX-005)."""
    return st.dictionaries(st.sampled_from(["url", "message", "retryAfter", "data"]), st.text(max_size=8), max_size=2)


def error_infos(spec: Any) -> st.SearchStrategy[ErrorInfo]:
    """turn.error values of every family: each variant of the union (with every httpStatusCode
    form), the newer variants, and the unknown, mixed, empty and null-detail shapes."""
    oracle_variants = spec.table("codex", "variants").rows
    union = set(spec.vocabulary("codex.variant").values)
    strings = [r["variant"] for r in oracle_variants if r["kind"] == "string"]
    objects = [r["variant"] for r in oracle_variants if r["kind"] == "object"]
    http_variants = list(spec.vocabulary("codex.http_status_variant").values)

    def with_error(info: Any, category: str, status: int | None, family: str) -> st.SearchStrategy[ErrorInfo]:
        def build(message: str, details: Any) -> ErrorInfo:
            error = turn_error(info, message) if details is _MISSING else turn_error(info, message, **details)
            return ErrorInfo(error, category, status, family)

        details = st.one_of(st.just(_MISSING), st.fixed_dictionaries({"additionalDetails": st.none() | st.text()}))
        return st.builds(build, st.text(max_size=20), details)

    def string_variant(name: str) -> st.SearchStrategy[ErrorInfo]:
        return with_error(name, name, None, "string-variant")

    @st.composite
    def http_variant(draw: st.DrawFn) -> ErrorInfo:
        name = draw(st.sampled_from(http_variants))
        value, printed = draw(http_forms(spec))
        detail = draw(_detail_extras())
        if value is not _MISSING:
            detail["httpStatusCode"] = value
        return draw(with_error({name: detail}, name, printed, "http-variant"))

    @st.composite
    def other_object_variant(draw: st.DrawFn) -> ErrorInfo:
        name = draw(st.sampled_from([v for v in objects if v not in http_variants]))
        detail = {"turnKind": draw(st.sampled_from(["review", "compact"]) | st.text(max_size=8))}
        detail.update(draw(_detail_extras()))
        return draw(with_error({name: detail}, name, None, "object-variant"))

    newer = [r["wire"] for r in spec.table("codex", "newer_variants").rows]
    outside = st.text(max_size=24).filter(lambda s: s not in union)
    near_miss = st.sampled_from(sorted(union)).flatmap(
        lambda v: st.sampled_from([v.upper(), v.capitalize(), v + " ", " " + v, v.lower() + "\n"])
    ).filter(lambda s: s not in union)
    known = st.sampled_from(sorted(union))
    non_object = st.one_of(st.none(), st.integers(), st.booleans(), st.text(max_size=6), st.lists(st.integers(), max_size=2))
    unknown_info = st.one_of(
        st.sampled_from(newer),
        outside,
        near_miss,
        st.just({}),  # empty object
        st.dictionaries(known | st.text(max_size=6), st.just({}), min_size=2, max_size=3),  # mixed keys
        st.builds(lambda k, d: {k: d}, st.sampled_from(objects), non_object),  # null or non-object detail
        st.builds(lambda k: {k: {}}, st.sampled_from(strings)),  # a string variant written as an object
        st.builds(lambda k: {k: {"message": "x"}}, outside),  # an unknown object variant
        st.one_of(st.none(), st.integers(), st.booleans(), st.lists(known, max_size=2)),  # not a string or object
        st.just(_MISSING),
    )
    unknown = unknown_info.flatmap(lambda info: with_error(info, "unknown", None, "unknown"))
    odd_error = st.one_of(st.just(_MISSING), st.none(), st.text(max_size=8), st.lists(st.just({"codexErrorInfo": "other"})))
    return st.one_of(
        st.sampled_from(strings).flatmap(string_variant),
        http_variant(),
        other_object_variant(),
        unknown,
        odd_error.map(lambda e: ErrorInfo(e, "unknown", None, "not-an-error-object")),
    )


# JavaScript whitespace, Python-only whitespace and ordinary text: what answers are made of.
ANSWER_TEXTS = st.one_of(
    st.sampled_from(["answer", "  exact answer\n", "", " \n ", "\u3000\ufeff", "\u001c\u0085", "partial", "é 权限"]),
    st.text(max_size=12),
)


def split_points(draw: st.DrawFn, text: str, max_cuts: int = 4) -> list[str]:
    """``text`` cut into non-empty chunks at random positions."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=max_cuts))) if len(text) > 1 else []
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def latest_signature(signatures: list[str], chunks: list[str]) -> tuple[str, int] | None:
    """The signature whose last occurrence in the stream ends latest, and the chunk that completes it.

    Two signatures never overlap, so the one whose occurrence ends latest is also the one
    that starts latest within its chunk (CDX-040); the chunk it ends in is its observation.
    """
    stream = "".join(chunks)
    best: tuple[int, str] | None = None
    for signature in signatures:
        index = stream.rfind(signature)
        if index >= 0 and (best is None or index + len(signature) > best[0]):
            best = (index + len(signature), signature)
    if best is None:
        return None
    end, signature = best
    offset = 0
    for n, chunk in enumerate(chunks):
        offset += len(chunk)
        if offset >= end:
            return signature, n
    raise AssertionError("unreachable")


# ---- canaries (redaction.yaml RED-008)

_MARK = re.compile(r"«(\d+)»")


class Marks:
    """Placeholders for canaries in a scenario template: each call gives the next one."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"«{self.count - 1}»"


def canary_names(hexes: list[str]) -> list[str]:
    """Canaries that are no substring of any Codex grammar sentence and cannot complete a stderr signature."""
    return [f"SECRET_{h}_TOKEN" if n % 2 == 0 else f"/private/{h}/secret.txt" for n, h in enumerate(hexes)]


def instantiate(template: Any, names: list[str]) -> Any:
    """The template with every placeholder replaced by its canary (in keys and values)."""

    def text(value: str) -> str:
        return _MARK.sub(lambda m: names[int(m.group(1))], value)

    if isinstance(template, str):
        return text(template)
    if isinstance(template, list):
        return [instantiate(v, names) for v in template]
    if isinstance(template, dict):
        return {text(k): instantiate(v, names) for k, v in template.items()}
    return template


Planter = Callable[[st.DrawFn, Marks], Json]
