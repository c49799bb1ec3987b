"""The CodexErrorInfo union of each Codex version the provider supports, and how a failed
terminal's error is classified under the version it runs.

A failed turn's category is one of the version's union variants (tables variants,
http_status_forms) or unknown (table unknown_rules): 0.147.0 has eleven strings and five one-key
objects, 0.171.0 adds eight strings (and a catch-all that names no variant); only the four
connection and stream errors keep their detail's HTTP status. Nothing outside the version's
union is ever printed, so a newer or malformed variant is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reference_impl.codex_wire import is_number

# The string variants each Codex version's union adds, oldest first: a version's union is its
# own entry and every entry before it (0.171.0's catch-all names no variant, so adds none).
STRING_VARIANTS_ADDED: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "0.147.0",
        frozenset(
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
        ),
    ),
    (
        "0.171.0",
        frozenset(
            {
                "rateLimitExceeded",
                "flexUnavailable",
                "modelNotFound",
                "policyCapacityUnavailable",
                "bioPolicy",
                "misalignmentPolicyViolation",
                "tooManyDenials",
                "inferenceHookDenied",
            }
        ),
    ),
)
BASE_VERSION = STRING_VARIANTS_ADDED[0][0]


def string_variants(version: str) -> frozenset[str]:
    """The string variants of ``version``'s union; a version this provider was not built for is an error."""
    versions = [v for v, _ in STRING_VARIANTS_ADDED]
    if version not in versions:
        raise ValueError(f"no CodexErrorInfo union for @openai/codex {version} (supported: {', '.join(versions)})")
    return frozenset().union(*(added for _, added in STRING_VARIANTS_ADDED[: versions.index(version) + 1]))


STRING_VARIANTS = string_variants(BASE_VERSION)
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


def classify(
    error: Any, status_code: Callable[[Any], int | None] = http_status, strings: frozenset[str] = STRING_VARIANTS
) -> tuple[str, int | None]:
    """The category (and kept HTTP status, read by ``status_code``) of a failed terminal's
    ``turn.error`` under the union whose string variants are ``strings``; anything outside it is unknown."""
    if not isinstance(error, dict):
        return "unknown", None
    info = error.get("codexErrorInfo")
    if isinstance(info, str):
        return (info, None) if info in strings else ("unknown", None)
    if isinstance(info, dict) and len(info) == 1:
        [(name, detail)] = info.items()
        if isinstance(detail, dict):
            if name in HTTP_STATUS_VARIANTS:
                return name, status_code(detail.get("httpStatusCode"))
            if name == ACTIVE_TURN_NOT_STEERABLE:
                return name, None
    return "unknown", None
