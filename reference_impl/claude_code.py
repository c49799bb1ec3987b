"""The Claude Code provider's run outcome: SDK messages, permission callbacks, the stream's
end and the managed process's exit become one SubagentResult.

Written the way a provider drives the Claude Agent SDK: the SDK iterates the message
stream and calls the permission callbacks the provider installed while it does; the
provider validates every result message strictly as it arrives, keeps only the latest
permission fact, and when the run fails classifies the failure once, with the process
outcome it has observed at that moment, into a fixed line that never quotes product text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from reference_impl.diagnostic import MAX_EXIT_CODE, NODE_SIGNALS, bound_diagnostic
from reference_impl.process import ProcessOutcome

Json = dict[str, Any]

PRODUCT = "Claude Code"

# SDKResultError["subtype"] of each range of @anthropic-ai/claude-agent-sdk releases the provider
# supports (0.3.220 sdk.d.ts:4271), with every release the range covers: measured unchanged in the
# sdk.d.ts of every release 0.3.220..0.3.334 (npm publishes no 0.3.230, 244, 249, 253-256, 262,
# 264, 279, 297, 298, 313, 320).
_MISSING = {230, 244, 249, 253, 254, 255, 256, 262, 264, 279, 297, 298, 313, 320}
_SUBTYPES = frozenset(
    {"error_during_execution", "error_max_turns", "error_max_budget_usd", "error_max_structured_output_retries"}
)
ERROR_SUBTYPES_BY_RANGE: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = (
    (tuple(f"0.3.{n}" for n in range(220, 335) if n not in _MISSING), _SUBTYPES),
)
BASE_VERSION = "0.3.220"
ERROR_SUBTYPES = _SUBTYPES


def error_subtypes(version: str) -> frozenset[str]:
    """The error subtypes of ``version``'s result union; a release this provider was not built for is an error."""
    for releases, subtypes in ERROR_SUBTYPES_BY_RANGE:
        if version in releases:
            return subtypes
    supported = ", ".join(f"{r[0]}..{r[-1]}" for r, _ in ERROR_SUBTYPES_BY_RANGE)
    raise ValueError(f"no result union for @anthropic-ai/claude-agent-sdk {version} (supported: {supported})")


DENY_TOOL = {"behavior": "deny", "message": "This unattended Claude Code subagent cannot request human approval."}
DECLINE_ELICITATION = {"action": "decline"}
CANCEL_DIALOG = {"behavior": "cancelled"}


# --------------------------------------------------------------------------- JavaScript semantics

# ECMAScript 2024 §12.2 WhiteSpace (TAB, VT, FF, ZWNBSP and every Zs code point, which covers
# SP and NBSP) and §12.3 LineTerminator (LF, CR, LS, PS): what String.prototype.trim() removes.
_JS_FORMAT_WHITESPACE = frozenset("\t\v\f\ufeff")
_JS_LINE_TERMINATORS = frozenset("\n\r\u2028\u2029")


def is_js_whitespace(char: str) -> bool:
    """Whether JavaScript's trim() removes ``char`` (Python's str.isspace() is a different set)."""
    return char in _JS_FORMAT_WHITESPACE or char in _JS_LINE_TERMINATORS or unicodedata.category(char) == "Zs"


def is_blank(text: str) -> bool:
    """``text.trim().length === 0`` in JavaScript: empty, or made only of JS whitespace."""
    return all(is_js_whitespace(char) for char in text)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: an empty array or object is truthy, 0 and "" are not."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        return value != ""
    return True


# --------------------------------------------------------------------------- failure facts


class ClaudeCodeFailure(Exception):
    """A failure the provider classified itself (an SDK subtype or a synthetic category)."""

    def __init__(self, stage: str, category: str) -> None:
        super().__init__(f"{stage}/{category}")
        self.stage = stage
        self.category = category


class SdkIteratorError(Exception):
    """The exception that ended the SDK message stream (its text is never read)."""


def failure_line(stage: str, category: str, outcome: ProcessOutcome | None) -> str:
    """The one safe line of a failure: fixed labels, closed values, observed exit facts only."""
    fields = [f"product: {PRODUCT}", f"stage: {stage}", f"category: {category}"]
    if outcome is not None:
        if outcome.exit_code is not None and _is_exit_code(outcome.exit_code):
            fields.append(f"exit code: {int(outcome.exit_code)}")
        if outcome.signal in NODE_SIGNALS:
            fields.append(f"signal: {outcome.signal}")
    return "Product subagent failure (" + "; ".join(fields) + ")"


def _is_exit_code(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and 0 <= value <= MAX_EXIT_CODE


def permission_line(mode: str, request: str, decision: str, reason: str) -> str:
    return f"{PRODUCT} unattended decision (mode: {mode}; request: {request}; decision: {decision}): {reason}"


# --------------------------------------------------------------------------- the run


class ClaudeCodeRun:
    """One published run: its permission mode, its latest permission fact, the results it saw."""

    version = BASE_VERSION  # the Agent SDK version whose result union the run reads (productVersion)

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.permission_fact: str | None = None
        self.received_result = False
        self.answer: str | None = None

    # ---- permission decisions: answered at once, recorded as the run's latest fact

    def record_permission_fact(self, request: str, decision: str, reason: str) -> None:
        self.permission_fact = permission_line(self.mode, request, decision, reason)

    def can_use_tool(self, tool_name: Any, tool_input: Any, options: Any) -> Json:
        self.record_permission_fact("tool permission", "denied", "the provider does not request human approval")
        return dict(DENY_TOOL)

    def on_elicitation(self, request: Any) -> Json:
        self.record_permission_fact(
            "MCP elicitation", "declined", "the provider does not collect interactive MCP input"
        )
        return dict(DECLINE_ELICITATION)

    def on_user_dialog(self, request: Any) -> Json:
        self.record_permission_fact("user dialog", "cancelled", "the provider does not render blocking dialogs")
        return dict(CANCEL_DIALOG)

    def callbacks(self) -> dict[str, Callable[..., Json]]:
        """What the provider hands to query(); bypassPermissions installs no tool-permission callback."""
        installed: dict[str, Callable[..., Json]] = {
            "onElicitation": self.on_elicitation,
            "onUserDialog": self.on_user_dialog,
        }
        if self.mode != "bypassPermissions":
            installed["canUseTool"] = self.can_use_tool
        return installed

    # ---- the stream

    def successful_result(self, message: Json) -> str:
        """Strict validation of one result message: its answer, or the failure it is."""
        subtype = message.get("subtype")
        if subtype != "success":
            if isinstance(subtype, str) and subtype in error_subtypes(self.version):
                if not isinstance(message.get("errors"), list):
                    raise ClaudeCodeFailure("query-run", "unknown")  # outside the declared type
                raise ClaudeCodeFailure("query-run", subtype)
            raise ClaudeCodeFailure("query-run", "unknown")
        if js_truthy(message.get("is_error")):
            raise ClaudeCodeFailure("query-run", "invalid-success")
        result = message.get("result")
        if not isinstance(result, str):
            raise ClaudeCodeFailure("query-run", "unknown")  # outside the declared type
        if self.is_blank(result):
            raise ClaudeCodeFailure("query-run", "invalid-success")
        return result

    @staticmethod
    def is_blank(text: str) -> bool:
        """Blank as the SDK's own TypeScript provider sees it: JavaScript trim()."""
        return is_blank(text)

    def consume(self, stream: Iterator[Json]) -> str:
        """Iterate the whole stream; only strict successes and a normal end complete the run."""
        for message in stream:
            if message.get("type") == "system" and message.get("subtype") == "permission_denied":
                self.record_permission_fact(
                    "tool permission", "denied", "Claude Code denied the request before an interactive prompt"
                )
                continue
            if message.get("type") != "result":
                continue
            self.received_result = True
            self.answer = self.successful_result(message)
        if self.answer is None:
            raise ClaudeCodeFailure("query-run", "missing-result")
        return self.answer

    def classify(self, error: BaseException, outcome: ProcessOutcome | None) -> tuple[str, str]:
        """Stage and category of a failed run, with the outcome observed right now."""
        if isinstance(error, ClaudeCodeFailure):
            return error.stage, error.category
        if outcome is not None and not self.received_result:
            return "process", "process-exit"
        return "query-run", "unknown"

    def compose_diagnostic(self, line: str) -> str:
        """The failure line first, then the latest permission fact, if any."""
        if self.permission_fact is None:
            return line
        return line + "\n" + self.permission_fact

    def failure_line(self, stage: str, category: str, outcome: ProcessOutcome | None) -> str:
        """The run's failure line; a method so that a provider variant can be checked by the suite."""
        return failure_line(stage, category, outcome)


# --------------------------------------------------------------------------- the SDK side of a scenario


def sdk_stream(scenario: Json, callbacks: dict[str, Callable[..., Json]]) -> Iterator[Json]:
    """The SDK's message iterator over an observed scenario: it calls installed callbacks as the
    CLI asks for them, yields messages, and raises the exception that ended the stream."""
    for event in scenario["events"]:
        if "callback" in event:
            callback = callbacks.get(event["callback"])
            if callback is not None:  # a callback the provider did not install is never called
                arguments = event.get("arguments", {})
                if event["callback"] == "canUseTool":
                    callback(arguments.get("toolName"), arguments.get("input"), arguments.get("options"))
                else:
                    callback(arguments)
            continue
        yield event["message"]
    if "exception" in scenario:
        raise SdkIteratorError(scenario["exception"]["message"])


def _observed_outcome(scenario: Json) -> ProcessOutcome | None:
    outcome = scenario.get("outcome")
    if outcome is None:
        return None
    return ProcessOutcome(outcome.get("exitCode"), outcome.get("signal"))


def settle(
    run: ClaudeCodeRun,
    stream: Iterator[Json],
    observed_outcome: Callable[[], ProcessOutcome | None],
    cancelled: Callable[[], bool],
) -> Json:
    """Consume ``stream`` and settle the run's result; the pure operation and the process
    driver share it, so a scenario and a real child are classified by the same code."""
    try:
        answer = run.consume(stream)
    except Exception as error:  # every failure settles the result; nothing rejects
        outcome = observed_outcome()  # read once, at classification
        stage, category = run.classify(error, outcome)
        diagnostic = run.compose_diagnostic(run.failure_line(stage, category, outcome))
        result: Json = {"stopReason": "error", "output": [], "diagnostic": bound_diagnostic(diagnostic)}
    else:
        result = {"stopReason": "completed", "output": [{"type": "text", "text": answer}]}
    if cancelled():
        return {"stopReason": "aborted", "output": []}  # local cancellation wins, whatever happened
    return result


def claude_code_outcome(request: Json, run_class: type[ClaudeCodeRun] = ClaudeCodeRun) -> Json:
    """Settle one run as the provider observed it (claude-code.yaml, outcome_vectors scenario)."""
    run = run_class(request["mode"])
    run.version = request.get("productVersion", run.version)
    return settle(
        run,
        sdk_stream(request, run.callbacks()),
        lambda: _observed_outcome(request),
        lambda: bool(request.get("cancelled", False)),
    )
