"""The diagnostic bound: a provider's diagnostic reaches the parent as at most 4096 UTF-8 bytes."""

from __future__ import annotations

MAX_DIAGNOSTIC_BYTES = 4096
TRUNCATION_SUFFIX = "\n[diagnostic truncated]"


def bound_diagnostic(text: str) -> str:
    """Cut an over-long diagnostic on a code-point boundary and mark the cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_DIAGNOSTIC_BYTES:
        return text
    cut = MAX_DIAGNOSTIC_BYTES - len(TRUNCATION_SUFFIX.encode("utf-8"))
    while encoded[cut] & 0xC0 == 0x80:  # a continuation byte: the cut would split a code point
        cut -= 1
    return encoded[:cut].decode("utf-8") + TRUNCATION_SUFFIX
