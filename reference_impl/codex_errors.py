"""The CodexErrorInfo union of each Codex version the provider supports, and how a failed
terminal's error is classified under the version it runs.

A failed turn's category is one of the version's union variants (tables variants,
http_status_forms) or unknown (table unknown_rules): 0.147.0 has eleven strings and five one-key
objects, the later releases add eight strings one range at a time (and, from 0.161.0, a catch-all
that names no variant); only the four
connection and stream errors keep their detail's HTTP status. Nothing outside the version's
union is ever printed, so a newer or malformed variant is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reference_impl.codex_wire import is_number

# The string variants each range of Codex releases adds to the union, oldest first: a release's
# union is its range's additions and every range's before it. Each range lists every release it
# covers, as this provider measured them (generate-json-schema of each; 0.153.1 publishes no
# binary, 0.161.0's anyOf catch-all names no variant, so adds none).
BASE = frozenset(
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
STRING_VARIANTS_ADDED: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = (
    (("0.147.0", "0.148.0-alpha.8"), BASE),
    (("0.148.0", "0.149.0", "0.149.1", "0.150.0", "0.150.1"), frozenset({"misalignmentPolicyViolation"})),
    (
        ("0.151.0", "0.152.0", "0.152.1", "0.153.0", "0.153.2", "0.153.3", "0.153.4", "0.154.0", "0.155.0")
        + ("0.155.1", "0.156.0", "0.156.1", "0.157.0", "0.157.1"),
        frozenset({"rateLimitExceeded"}),
    ),
    (("0.158.0",), frozenset({"flexUnavailable"})),
    (("0.159.0", "0.159.1", "0.159.2", "0.159.3", "0.160.0", "0.160.1"), frozenset({"tooManyDenials"})),
    (("0.161.0", "0.162.0-alpha.15", "0.162.0", "0.162.1", "0.163.0", "0.164.0"), frozenset()),
    (("0.165.0",), frozenset({"modelNotFound"})),
    (("0.166.0", "0.167.2", "0.168.0"), frozenset({"policyCapacityUnavailable"})),
    (("0.169.0", "0.169.1"), frozenset({"inferenceHookDenied"})),
    (("0.171.0",), frozenset({"bioPolicy"})),
)
BASE_VERSION = STRING_VARIANTS_ADDED[0][0][0]


def string_variants(version: str) -> frozenset[str]:
    """The string variants of ``version``'s union; a release this provider was not built for is an error."""
    for index, (releases, _) in enumerate(STRING_VARIANTS_ADDED):
        if version in releases:
            return frozenset().union(*(added for _, added in STRING_VARIANTS_ADDED[: index + 1]))
    supported = ", ".join(f"{r[0]}..{r[-1]}" if len(r) > 1 else r[0] for r, _ in STRING_VARIANTS_ADDED)
    raise ValueError(f"no CodexErrorInfo union for @openai/codex {version} (supported: {supported})")


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
