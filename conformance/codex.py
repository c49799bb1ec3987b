"""Scenario builders, strategies and the oracle for codex_outcome, built from spec/codex.yaml
(rows of its tables, its vocabularies) and the line formats of spec/diagnostic.yaml.

A scenario is what a Codex provider observed of one published run, in order (table
outcome_vectors); the oracle says what the spec makes of it. Generated values carry their own
expected reading (a wire form from table `variants` carries its variant, an HTTP status form
from table `http_status_forms` carries `kept`/`printed`), so no test restates a rule the
spec already tabulates.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.texts import any_text

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
    return st.dictionaries(st.sampled_from(["url", "message", "retryAfter", "data"]), any_text(max_size=8), max_size=2)


def error_infos(spec: Any) -> st.SearchStrategy[ErrorInfo]:
    """turn.error values of every family: each variant of the union (with every httpStatusCode
    form), the newer variants, and the unknown, mixed, empty and null-detail shapes."""
    rows = spec.table("codex", "variants").rows
    union = set(spec.vocabulary("codex.variant").values)
    strings = [r["variant"] for r in rows if r["kind"] == "string"]
    objects = [r["variant"] for r in rows if r["kind"] == "object"]
    http_variants = list(spec.vocabulary("codex.http_status_variant").values)
    forms = http_forms(spec)

    @st.composite
    def http_variant(draw: st.DrawFn) -> tuple[Any, str, int | None, str]:
        name = draw(st.sampled_from(http_variants))
        value, printed = draw(forms)
        detail = draw(_detail_extras())
        if value is not _MISSING:
            detail["httpStatusCode"] = value
        return {name: detail}, name, printed, "http-variant"

    @st.composite
    def other_object_variant(draw: st.DrawFn) -> tuple[Any, str, int | None, str]:
        name = draw(st.sampled_from([v for v in objects if v not in http_variants]))
        detail = {"turnKind": draw(st.sampled_from(["review", "compact"]) | any_text(max_size=8))}
        detail.update(draw(_detail_extras()))
        return {name: detail}, name, None, "object-variant"

    newer = [r["wire"] for r in spec.table("codex", "newer_variants").rows]
    outside = any_text(max_size=24).filter(lambda s: s not in union)
    recase = st.sampled_from(
        [str.upper, str.capitalize, lambda v: v + " ", lambda v: " " + v, lambda v: v.lower() + "\n"]
    )
    near_miss = st.builds(lambda v, f: f(v), st.sampled_from(sorted(union)), recase).filter(lambda s: s not in union)
    known = st.sampled_from(sorted(union))
    non_object = st.one_of(
        st.none(), st.integers(), st.booleans(), any_text(max_size=6), st.lists(st.integers(), max_size=2)
    )
    unknown_info = st.one_of(
        st.sampled_from(newer),
        outside,
        near_miss,
        st.just({}),  # empty object
        st.dictionaries(known | any_text(max_size=6), st.just({}), min_size=2, max_size=3),  # mixed keys
        st.builds(lambda k, d: {k: d}, st.sampled_from(objects), non_object),  # null or non-object detail
        st.builds(lambda k: {k: {}}, st.sampled_from(strings)),  # a string variant written as an object
        st.builds(lambda k: {k: {"message": "x"}}, outside),  # an unknown object variant
        st.one_of(st.none(), st.integers(), st.booleans(), st.lists(known, max_size=2)),  # not a string or object
        st.just(_MISSING),
    )
    labelled = st.one_of(
        st.sampled_from(strings).map(lambda name: (name, name, None, "string-variant")),
        http_variant(),
        other_object_variant(),
        unknown_info.map(lambda info: (info, "unknown", None, "unknown")),
    )

    @st.composite
    def in_error(draw: st.DrawFn) -> ErrorInfo:
        info, category, status, family = draw(labelled)
        message = draw(any_text(max_size=20))
        details = draw(st.sampled_from([_MISSING, None]) | any_text(max_size=12))
        error = (
            turn_error(info, message) if details is _MISSING else turn_error(info, message, additionalDetails=details)
        )
        return ErrorInfo(error, category, status, family)

    odd_error = st.one_of(
        st.just(_MISSING), st.none(), any_text(max_size=8), st.lists(st.just({"codexErrorInfo": "other"}), max_size=2)
    )
    return st.one_of(in_error(), odd_error.map(lambda e: ErrorInfo(e, "unknown", None, "not-an-error-object")))


# JavaScript whitespace, Python-only whitespace and ordinary text: what answers are made of.
ANSWER_TEXTS = st.one_of(
    st.sampled_from(["answer", "  exact answer\n", "", " \n ", "\u3000\ufeff", "\u001c\u0085", "partial", "é 权限"]),
    any_text(max_size=12),
)


def split_points(draw: st.DrawFn, text: str, max_cuts: int = 4) -> list[str]:
    """``text`` cut into non-empty chunks at random positions."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=max_cuts))) if len(text) > 1 else []
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


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


# Values that spell what a diagnostic is made of (a category, a stage, a field, a whole line), so
# that a provider deriving any text from a raw field shows (RED-005). None is a value a field is
# read for (an exact variant name) or contains a stderr signature or a placeholder.
DECOYS = [
    "category: contextWindowExceeded",
    "stage: process; category: process-exit",
    "HTTP status: 503",
    "exit code: 0",
    "signal: SIGKILL",
    "Product subagent failure (product: Codex; stage: turn; category: other)",
    "Codex unattended decision (mode: never; request: user input; decision: empty response): "
    "the provider does not collect interactive answers",
    "contextWindowExceeded ",
    "CYBERPOLICY",
]


def decoy_names(count: int) -> list[str]:
    """``count`` distinct decoys to stand where the canaries stood."""
    return [f"{DECOYS[n % len(DECOYS)]} #{n}" for n in range(count)]


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


# ---- generated runs with their expected results


def _modes(oracle: CodexOracle) -> st.SearchStrategy[str]:
    return st.sampled_from(oracle.modes)


def _outcomes(oracle: CodexOracle) -> st.SearchStrategy[tuple[int | None, str | None]]:
    """Observed process outcomes: exit code, signal, both or neither (zero included)."""
    codes = st.one_of(st.none(), st.just(0), st.integers(0, 4294967295))
    return st.tuples(codes, st.none() | st.sampled_from(oracle.signals))


def _string_error_variants(oracle: CodexOracle) -> list[str]:
    return [v for v, r in oracle.variants.items() if r["kind"] == "string" and r["stop_reason"] == "error"]


def mapped_terminals(spec: Any, oracle: CodexOracle) -> st.SearchStrategy[tuple[Json, Json]]:
    """A terminal of any status and error info after a partial answer, maybe an ignored `error`
    notification before it and a process exit after it."""
    infos = error_infos(spec)

    @st.composite
    def run(draw: st.DrawFn) -> tuple[Json, Json]:
        return _mapped_terminal(draw, infos, oracle)

    return run()


def _mapped_terminal(draw: st.DrawFn, infos: st.SearchStrategy[ErrorInfo], oracle: CodexOracle) -> tuple[Json, Json]:
    mode = draw(_modes(oracle))
    final: str | None = None
    unphased: str | None = None
    events = [response()]
    for _ in range(draw(st.integers(0, 2))):
        text, phase = draw(ANSWER_TEXTS), draw(st.sampled_from(["final_answer", None, "commentary"]))
        events.append(agent_message(text, phase))
        if phase == "final_answer":
            final = text
        elif phase is None:
            unphased = text
    if draw(st.booleans()):  # the `error` notification is never the terminal (CDX-023)
        noise = draw(infos)
        events.append(
            notification(
                "error",
                {
                    "error": noise.error if noise.error is not _MISSING else None,
                    "threadId": THREAD_ID,
                    "turnId": TURN_ID,
                    "willRetry": draw(st.booleans()),
                },
            )
        )
    status = draw(st.sampled_from(oracle.statuses))
    info = draw(infos)
    events.append(terminal(failed_turn(info.error, status=status)))
    exit_code, signal = draw(st.one_of(st.just((None, None)), _outcomes(oracle)))
    if (exit_code, signal) != (None, None) or draw(st.booleans()):
        events.append(process_exit(exit_code, signal))
    output = oracle.selected_output(final, unphased)
    request = scenario(events, mode=mode)
    if status == "completed" and output:
        return request, {"stopReason": "completed", "output": output, "replies": []}
    category, status_code, fact = "unknown", None, None
    if status == "failed":
        category, status_code = info.category, info.http_status
        if category == "sandboxError":
            fact = oracle.fact_by_trigger("sandboxError")
    return request, oracle.failure(
        mode, output, "turn", category, http_status=status_code, exit_code=exit_code, signal=signal, fact=fact
    )


@st.composite
def answer_runs(draw: st.DrawFn, oracle: CodexOracle) -> tuple[Json, Json]:
    """agentMessage items (some early, some foreign, some of other types) and every way the run can end."""
    mode = draw(_modes(oracle))
    final: str | None = None
    unphased: str | None = None
    early = draw(st.integers(0, 2))
    events: list[Json] = []
    fatal = False
    for n in range(draw(st.integers(0, 6))):
        if n == early:
            events.append(response())
        kind = draw(st.sampled_from(["message", "message", "message", "other-type", "foreign-thread", "foreign-turn"]))
        text, phase = draw(ANSWER_TEXTS), draw(st.sampled_from(["final_answer", None, "commentary"]))
        if kind == "message":
            events.append(agent_message(text, phase))
            if phase == "final_answer":
                final = text
            elif phase is None:
                unphased = text
        elif kind == "other-type":
            other = draw(st.sampled_from(["reasoning", "userMessage", "commandExecution", "plan"]))
            events.append(item_completed({"type": other, "text": text, "status": "completed"}))
        elif kind == "foreign-thread":
            events.append(agent_message(text, phase, thread_id="thread-2"))
        elif n >= early:  # another turn is ignored only once the turn id is committed
            events.append(agent_message(text, phase, turn_id="turn-2"))
    if len([e for e in events if "turn_start" in e]) == 0:
        events.append(response())
    output = oracle.selected_output(final, unphased)
    ending = draw(
        st.sampled_from(
            ["completed", "failed", "interrupted", "exit", "eof", "eof-exit", "unobservable", "fatal-item", "cancel"]
        )
    )
    cancelled = ending == "cancel" or draw(st.integers(0, 9)) == 0
    exit_code, signal = draw(_outcomes(oracle))
    category, status_code, stage, fact = "unknown", None, "turn", None
    completed = False
    if ending in ("completed", "cancel"):
        events.append(terminal(failed_turn(None, status="completed")))
        completed = bool(output)
        exit_code = signal = None
    elif ending == "failed":
        row = oracle.variants[draw(st.sampled_from(sorted(oracle.variants)))]
        events.append(terminal(failed_turn(turn_error(row["wire"]))))
        category = row["variant"]
        if isinstance(row["wire"], dict):
            status_code = js_uint16(next(iter(row["wire"].values())).get("httpStatusCode"))
        if category == "sandboxError":
            fact = oracle.fact_by_trigger("sandboxError")
        exit_code = signal = None
    elif ending == "interrupted":
        events.append(terminal(failed_turn(None, status="interrupted")))
        exit_code = signal = None
    elif ending == "exit":
        events.append(process_exit(exit_code, signal))
        stage, category = "process", "process-exit"
    elif ending == "eof":
        events.append({"stdout_end": True})
        exit_code = signal = None
    elif ending == "eof-exit":
        events += [{"stdout_end": True}, process_exit(exit_code, signal)]
        stage, category = "process", "process-exit"
    elif ending == "unobservable":
        events.append({"exit_unobservable": True})
        stage = "process"
        exit_code = signal = None
    else:
        bad = draw(
            st.sampled_from(
                [
                    {"type": "agentMessage", "text": 42, "phase": "final_answer"},
                    {"type": "agentMessage", "text": "x"},
                    {"type": "agentMessage", "text": "x", "phase": "Final_Answer"},
                    {"type": "agentMessage", "text": None, "phase": "commentary"},
                ]
            )
        )
        assert oracle.fatal_agent_message(bad)
        fatal = True
        events.append(item_completed(bad))
        exit_code = signal = None
    request = scenario(events, mode=mode, cancelled=cancelled)
    if cancelled:
        return request, {"stopReason": "aborted", "output": output, "replies": []}
    if completed and not fatal:
        return request, {"stopReason": "completed", "output": output, "replies": []}
    return request, oracle.failure(
        mode, output, stage, category, http_status=status_code, exit_code=exit_code, signal=signal, fact=fact
    )


STDERR_NOISE = [
    "WARN codex_core: noise\n",
    "approval policy is never; reject command",
    "recorded sandbox violation",
    "approval policy is Ne",
    "w rules",
    "recorded sand",
    "SECRET_TOKEN at /private/secret.txt",
    " ",
    "—",
]


@st.composite
def fact_runs(draw: st.DrawFn, spec: Any, oracle: CodexOracle) -> tuple[Json, Json]:
    """Permission triggers of every kind, early and late, then a failed terminal, a completion
    or a cancellation: only the latest fact by observation order may appear, and only on failure."""
    mode = draw(_modes(oracle))
    granted = [r for r in spec.table("codex", "server_request_replies").rows if not r["fails_run"]]
    replies: list[Json] = []
    facts: list[Fact] = []

    def trigger(n: int) -> Json:
        kind = draw(st.sampled_from(["request", "request", "declined-item", "stderr"]))
        if kind == "request":
            row = draw(st.sampled_from(granted))
            request_id: Any = draw(st.sampled_from([f"r{n}", n]))
            replies.append({"id": request_id, **row["reply"]})
            facts.append(oracle.fact_by_decision(row["request"], row["decision"]))
            return server_request(request_id, row["method"], row["params"])
        if kind == "declined-item":
            item_type = draw(st.sampled_from(["commandExecution", "fileChange"]))
            facts.append(oracle.fact_by_trigger(f"type {item_type}"))
            return item_completed({"type": item_type, "status": "declined", "id": f"item-{n}"})
        signature = draw(st.sampled_from(oracle.signatures))
        facts.append(oracle.signature_fact(signature))
        return {"stderr": f"WARN {n} {signature} noise\n"}

    early = [trigger(n) for n in range(draw(st.integers(0, 2)))]
    late = [trigger(n) for n in range(10, 10 + draw(st.integers(0, 4)))]
    events = [*early, response(), *late]
    output: list[Json] = []
    if draw(st.booleans()):
        text = draw(st.sampled_from(["answer", "partial answer"]))
        events.append(agent_message(text, "final_answer"))
        output = [{"type": "text", "text": text}]
    ending = draw(st.sampled_from(["failed", "failed", "completed", "cancel"]))
    if ending == "completed" and output:
        events.append(terminal(failed_turn(None, status="completed")))
        return scenario(events, mode=mode), {"stopReason": "completed", "output": output, "replies": replies}
    variant = draw(st.sampled_from(_string_error_variants(oracle)))
    events.append(terminal(failed_turn(turn_error(variant))))
    if variant == "sandboxError":
        facts.append(oracle.fact_by_trigger("sandboxError"))
    if draw(st.booleans()):  # stderr observed after the terminal still counts (CDX-074)
        signature = draw(st.sampled_from(oracle.signatures))
        facts.append(oracle.signature_fact(signature))
        events.append({"stderr": signature})
    if ending == "cancel":
        return scenario(events, mode=mode, cancelled=True), {
            "stopReason": "aborted",
            "output": output,
            "replies": replies,
        }
    return scenario(events, mode=mode), oracle.failure(
        mode, output, "turn", variant, fact=facts[-1] if facts else None, replies=replies
    )


@st.composite
def stderr_runs(draw: st.DrawFn, oracle: CodexOracle) -> tuple[Json, Json]:
    """A stderr stream of signatures, near misses and canaries, cut anywhere into chunks, with
    maybe a server request between two chunks, before a failed terminal."""
    mode = draw(_modes(oracle))
    pieces = draw(st.lists(st.sampled_from(oracle.signatures) | st.sampled_from(STDERR_NOISE), min_size=1, max_size=6))
    chunks = split_points(draw, "".join(pieces), max_cuts=8)
    events: list[Json] = [response()] + [{"stderr": c} for c in chunks]
    request_at = draw(st.none() | st.integers(0, len(chunks)))
    request_fact = oracle.fact_by_decision("user input", "empty response")
    replies: list[Json] = []
    if request_at is not None:
        events.insert(
            1 + request_at,
            server_request("input", "item/tool/requestUserInput", {"threadId": THREAD_ID, "turnId": TURN_ID}),
        )
        replies = [{"id": "input", "result": {"answers": {}}}]
    variant = draw(st.sampled_from([v for v in _string_error_variants(oracle) if v != "sandboxError"]))
    events.append(terminal(failed_turn(turn_error(variant))))
    found = latest_signature(oracle.signatures, chunks)
    fact: Fact | None = None
    if found is not None:
        fact = oracle.signature_fact(found[0])
        if request_at is not None and request_at > found[1]:
            fact = request_fact
    elif request_at is not None:
        fact = request_fact
    return scenario(events, mode=mode), oracle.failure(mode, [], "turn", variant, fact=fact, replies=replies)


@st.composite
def settlement_runs(draw: st.DrawFn, oracle: CodexOracle) -> tuple[Json, Json]:
    """Every way a published run settles (terminal, fatal frame, failing turn/start, process
    exit, stdout end, unobservable outcome), then what may still be observed: an exit, stderr."""
    mode = draw(_modes(oracle))
    committed = draw(st.booleans())
    events: list[Json] = [response()] if committed else []
    output: list[Json] = []
    if committed and draw(st.booleans()):
        events.append(agent_message("partial", draw(st.sampled_from(["final_answer", None]))))
        output = [{"type": "text", "text": "partial"}]
    stage = "turn" if committed else "turn-start"
    kinds = ["fatal", "exit", "eof", "unobservable"] + (
        ["failed", "completed"] if committed else ["turn-start-error", "turn-start-invalid"]
    )
    kind = draw(st.sampled_from(kinds))
    category = "unknown"
    exit_code: int | None = None
    signal: str | None = None
    fact: Fact | None = None
    exited = False
    if kind == "failed":
        category = draw(st.sampled_from(_string_error_variants(oracle)))
        events.append(terminal(failed_turn(turn_error(category))))
        if category == "sandboxError":
            fact = oracle.fact_by_trigger("sandboxError")
    elif kind == "completed":
        events.append(terminal(failed_turn(None, status="completed")))
    elif kind == "fatal":
        events.append(notification("turn/completed", None))
    elif kind == "turn-start-error":
        events.append({"turn_start": {"error": {"code": -32600, "message": "turn/start refused"}}})
    elif kind == "turn-start-invalid":
        events.append(
            {"turn_start": {"result": draw(st.sampled_from([None, {}, {"turn": {}}, {"turn": {"id": ""}}, [1]]))}}
        )
    elif kind == "exit":
        exit_code, signal = draw(_outcomes(oracle))
        events.append(process_exit(exit_code, signal))
        stage, category, exited = "process", "process-exit", True
    elif kind == "eof":
        events.append({"stdout_end": True})
        after = draw(st.sampled_from(["nothing", "exit", "unobservable"]))
        if after == "exit":
            exit_code, signal = draw(_outcomes(oracle))
            events.append(process_exit(exit_code, signal))
            stage, category, exited = "process", "process-exit", True
        elif after == "unobservable":
            events.append({"exit_unobservable": True})
            stage, exited = "process", True
    else:
        events.append({"exit_unobservable": True})
        stage, exited = "process", True
    if kind == "exit" and draw(st.booleans()):
        events.append({"stdout_end": True})  # stdout end after settlement changes nothing
    if not exited and kind != "eof" and draw(st.booleans()):
        exit_code, signal = draw(_outcomes(oracle))
        events.append(process_exit(exit_code, signal))
    if draw(st.booleans()):
        signature = draw(st.sampled_from(oracle.signatures))
        events.append({"stderr": signature})
        fact = oracle.signature_fact(signature)
    cancelled = draw(st.integers(0, 7)) == 0
    request = scenario(events, mode=mode, cancelled=cancelled)
    if cancelled:
        return request, {"stopReason": "aborted", "output": output, "replies": []}
    if kind == "completed" and output:
        return request, {"stopReason": "completed", "output": output, "replies": []}
    if kind == "completed":
        stage = "turn"
    return request, oracle.failure(mode, output, stage, category, exit_code=exit_code, signal=signal, fact=fact)


# ---- canary planting: one planter per Codex row of redaction.yaml table canary_sites


@dataclass
class RunTemplate:
    """A scenario under construction whose raw fields may hold canary placeholders."""

    marks: Marks
    thread: str = THREAD_ID
    turn: str = TURN_ID
    ids: bool = False  # whether request ids are canaries too (site protocol-id)
    requests: int = 0

    def request_id(self) -> Any:
        self.requests += 1
        return self.marks() if self.ids else f"request-{self.requests}"


@dataclass
class Planted:
    """Events carrying canaries; ``turn`` is a terminal turn to settle with, ``settles`` says that
    the planted events already settle the run (so that nothing but stderr and an exit may follow)."""

    events: list[Json]
    turn: Json | None = None
    settles: bool = False


def _infos(spec: Any) -> st.SearchStrategy[Any]:
    """A codexErrorInfo of the union, of a newer version, or outside both (no canary inside)."""
    wires = [r["wire"] for r in spec.table("codex", "variants").rows]
    newer = [r["wire"] for r in spec.table("codex", "newer_variants").rows]
    return st.sampled_from([*wires, *newer, "futureError", {}, None])


def _approval_decisions() -> st.SearchStrategy[Any]:
    return st.sampled_from([["cancel"], ["decline"], ["accept", "decline", "cancel"], ["accept"], None])


def _plant_turn_error_message(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    message = draw(st.sampled_from([f"{m()}", f"{m()} in {m()}", f"failed at {m()} with {m()}"]))
    return Planted([], failed_turn(turn_error(draw(_infos(spec)), message), run.turn))


def _plant_additional_details(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    details = draw(st.sampled_from([run.marks(), f"raw command payload {run.marks()}"]))
    return Planted([], failed_turn(turn_error(draw(_infos(spec)), "m", additionalDetails=details), run.turn))


def _plant_turn_kind(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    detail = draw(
        st.sampled_from([{"turnKind": m()}, {"turnKind": "review", m(): m()}, {"turnKind": m(), "note": m()}])
    )
    return Planted([], failed_turn(turn_error({"activeTurnNotSteerable": detail}), run.turn))


def _plant_unknown_variant(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    shapes: list[Callable[[], Any]] = [
        lambda: m(),
        lambda: {m(): {"message": m()}},
        lambda: {"httpConnectionFailed": {"httpStatusCode": 503}, m(): {}},
        lambda: {"activeTurnNotSteerable": m()},
        lambda: [m(), "contextWindowExceeded"],
        lambda: {"other": {"detail": m()}},
        lambda: {"responseStreamDisconnected": {"httpStatusCode": m()}},
        lambda: {"httpConnectionFailed": [m()]},
    ]
    info = shapes[draw(st.integers(0, len(shapes) - 1))]()
    return Planted([], failed_turn(turn_error(info, "m"), run.turn))


def _plant_approval_command(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    params: Json = {"threadId": run.thread, "turnId": run.turn, "command": f"cat {m()}", "cwd": m(), "reason": m()}
    decisions = draw(_approval_decisions())
    if decisions is not None:
        params["availableDecisions"] = decisions
    return Planted(
        [server_request(run.request_id(), "item/commandExecution/requestApproval", params)],
        settles=decisions == ["accept"],
    )


def _plant_item_command(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    item = {
        "type": "commandExecution",
        "status": "declined",
        "command": f"cat {m()}",
        "cwd": m(),
        "aggregatedOutput": m(),
    }
    return Planted([item_completed(item, run.turn, run.thread)])


def _plant_file_change(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    if draw(st.booleans()):
        item = {"type": "fileChange", "status": "declined", "changes": [{"path": m(), "kind": "update", "diff": m()}]}
        return Planted([item_completed(item, run.turn, run.thread)])
    params: Json = {"threadId": run.thread, "turnId": run.turn, "patch": m(), "grantRoot": m(), "reason": m()}
    decisions = draw(_approval_decisions())
    if decisions is not None:
        params["availableDecisions"] = decisions
    return Planted(
        [server_request(run.request_id(), "item/fileChange/requestApproval", params)], settles=decisions == ["accept"]
    )


def _plant_request_payload(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    ids = {"threadId": run.thread, "turnId": run.turn}
    choices: list[Callable[[], tuple[str, Json]]] = [
        lambda: (
            "item/permissions/requestApproval",
            {**ids, "permissions": {"fileSystem": {"write": [m()]}}, "reason": m()},
        ),
        lambda: ("item/tool/requestUserInput", {**ids, "questions": [{"id": m(), "header": m(), "question": m()}]}),
        lambda: (
            "mcpServer/elicitation/request",
            {
                **ids,
                "turnId": draw(st.sampled_from([run.turn, None])),
                "serverName": m(),
                "message": m(),
                "requestedSchema": {"properties": {m(): {"type": "string"}}},
            },
        ),
        lambda: (f"{m()}/request", {**ids, "payload": m()}),
    ]
    pick = draw(st.integers(0, len(choices) - 1))
    method, params = choices[pick]()
    return Planted([server_request(run.request_id(), method, params)], settles=pick == len(choices) - 1)


def _plant_error_notification(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    error = turn_error(draw(_infos(spec)), f"{m()} at {m()}", additionalDetails=m())
    params = {"error": error, "threadId": run.thread, "turnId": run.turn, "willRetry": draw(st.booleans())}
    return Planted([notification("error", params)])


def _plant_rpc_error(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    return Planted([{"frame": {"id": m(), "error": {"code": -32000, "message": m(), "data": {"detail": m()}}}}])


def _plant_protocol_ids(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    params = {"threadId": run.thread, "turnId": run.turn}
    return Planted([server_request(run.request_id(), "item/tool/requestUserInput", params)])


def _plant_stderr(draw: st.DrawFn, spec: Any, run: RunTemplate) -> Planted:
    m = run.marks
    signatures = [str(v) for v in spec.vocabulary("codex.stderr_signature").values]
    pieces = draw(st.lists(st.sampled_from([*signatures, "noise"]), max_size=3))
    stream = [m()]
    for piece in pieces:
        stream += [piece, m()] if piece != "noise" else [f" {m()} at {m()}\n"]
    chunks: list[str] = []
    for piece in stream:  # cut inside signatures, never inside a placeholder
        chunks += split_points(draw, piece, max_cuts=2) if "«" not in piece else [piece]
    return Planted([{"stderr": c} for c in chunks])


PLANTERS: dict[str, Callable[[st.DrawFn, Any, RunTemplate], Planted]] = {
    "turn-error-message": _plant_turn_error_message,
    "turn-error-additional-details": _plant_additional_details,
    "active-turn-kind": _plant_turn_kind,
    "unknown-variant": _plant_unknown_variant,
    "approval-request-command": _plant_approval_command,
    "command-item-command": _plant_item_command,
    "file-change-patch": _plant_file_change,
    "server-request-payload": _plant_request_payload,
    "error-notification": _plant_error_notification,
    "rpc-error-message": _plant_rpc_error,
    "protocol-id": _plant_protocol_ids,
    "stderr-chunk": _plant_stderr,
}


@st.composite
def planted_runs(draw: st.DrawFn, spec: Any, site: str) -> tuple[Json, int]:
    """A scenario template with canaries planted at ``site`` (and the number of placeholders):
    the planted frames come early or late, then any settlement, then maybe an exit or stderr.
    Nothing but stderr and an exit follows the settling observation (CDX-074)."""
    marks = Marks()
    run = RunTemplate(marks)
    if site == "protocol-id":
        run.thread, run.turn, run.ids = marks(), marks(), True
    mode = draw(st.sampled_from([str(v) for v in spec.vocabulary("codex.permission_mode").values]))
    planted = PLANTERS[site](draw, spec, run)
    exited = False
    early = not planted.settles and draw(st.booleans())
    if site == "rpc-error-message" and draw(st.booleans()):  # the turn/start request itself fails
        m = run.marks
        events = [
            *planted.events,
            {"turn_start": {"error": {"code": -32600, "message": f"{m()} in {m()}", "data": m()}}},
        ]
    else:
        events = [*(planted.events if early else []), response(run.turn)]
        if draw(st.booleans()):
            events.append(
                agent_message("partial answer", draw(st.sampled_from(["final_answer", None])), run.turn, run.thread)
            )
        if not early:
            events += planted.events
        if site == "protocol-id" and draw(st.booleans()):
            events.append(
                item_completed({"type": "fileChange", "status": "declined", "id": marks()}, run.turn, run.thread)
            )
        if planted.turn is not None:
            events.append(terminal(planted.turn, run.thread))
        elif not planted.settles:
            ending = draw(st.sampled_from(["failed", "completed", "interrupted", "exit", "eof", "unobservable"]))
            if ending in ("failed", "completed", "interrupted"):
                error = turn_error(draw(_infos(spec))) if ending != "completed" else None
                events.append(terminal(failed_turn(error, run.turn, status=ending), run.thread))
            elif ending == "exit":
                events.append(
                    process_exit(draw(st.sampled_from([None, 0, 17])), draw(st.sampled_from([None, "SIGKILL"])))
                )
                exited = True
            elif ending == "eof":
                events.append({"stdout_end": True})
            else:
                events.append({"exit_unobservable": True})
                exited = True
    if draw(st.booleans()):
        events.append({"stderr": f"{marks()} recorded sandbox violation: {marks()}"})
    if not exited and draw(st.booleans()):
        events.append(process_exit(draw(st.sampled_from([None, 3])), draw(st.sampled_from([None, "SIGTERM"]))))
    cancelled = draw(st.integers(0, 9)) == 0
    return scenario(events, mode=mode, thread_id=run.thread, cancelled=cancelled), marks.count
