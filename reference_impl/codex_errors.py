"""The locked 0.147.0 CodexErrorInfo union and how a failed terminal's error is classified.

A failed turn's category is one of the union's sixteen variants (tables variants,
http_status_forms) or unknown (table unknown_rules): eleven are written as a string, five as a
one-key object, and only the four connection and stream errors keep their detail's HTTP status.
Nothing outside the union is ever printed, so a newer or malformed variant is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reference_impl.codex_wire import is_number

STRING_VARIANTS = frozenset(
    {
        "contextWindowExceeded",
        "sessionBudgetExceeded",
        "usageLimitExceeded",
        "serverOverloaded",
        "cyberPolicy",
        "internalServerError",
        "unauthorized",
        "badRequest",
        "threadRollbackFailed",
        "sandboxError",
        "other",
    }
)
HTTP_STATUS_VARIANTS = frozenset(
    {
        "httpConnectionFailed",
        "responseStreamConnectionFailed",
        "responseStreamDisconnected",
        "responseTooManyFailedAttempts",
    }
)
ACTIVE_TURN_NOT_STEERABLE = "activeTurnNotSteerable"


def http_status(value: Any) -> int | None:
    """A uint16 status as Number.isInteger and a range check see it (503.0 is 503)."""
    if not is_number(value):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= 65535 else None


def classify(error: Any, status_code: Callable[[Any], int | None] = http_status) -> tuple[str, int | None]:
    """The category (and kept HTTP status, read by ``status_code``) of a failed terminal's
    ``turn.error``; anything outside the union is unknown."""
    if not isinstance(error, dict):
        return "unknown", None
    info = error.get("codexErrorInfo")
    if isinstance(info, str):
        return (info, None) if info in STRING_VARIANTS else ("unknown", None)
    if isinstance(info, dict) and len(info) == 1:
        [(name, detail)] = info.items()
        if isinstance(detail, dict):
            if name in HTTP_STATUS_VARIANTS:
                return name, status_code(detail.get("httpStatusCode"))
            if name == ACTIVE_TURN_NOT_STEERABLE:
                return name, None
    return "unknown", None
