"""Generated Codex runs with their expected results: answers, terminals, permission facts,
stderr signatures and every way a run settles.

Each strategy draws a scenario (conformance/areas/codex/scenarios.py) and, while it draws, the result
the oracle (conformance/areas/codex/oracle.py) gives for it, so a property test compares the two.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.areas.codex.oracle import CodexOracle, Fact, js_uint16
from conformance.areas.codex.scenarios import (
    THREAD_ID,
    TURN_ID,
    Json,
    agent_message,
    failed_turn,
    item_completed,
    notification,
    process_exit,
    response,
    scenario,
    server_request,
    terminal,
    turn_error,
)
from conformance.areas.codex.strategies import (
    ANSWER_TEXTS,
    MISSING,
    ErrorInfo,
    error_infos,
    latest_signature,
    split_points,
)
from conformance.areas.memo import memo


@memo
def _modes(oracle: CodexOracle) -> st.SearchStrategy[str]:
    return st.sampled_from(oracle.modes)


@memo
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
                    "error": noise.error if noise.error is not MISSING else None,
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
