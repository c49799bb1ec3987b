"""Adapter-supplied text made inert before the suite shows it: an error message or a stderr tail
may hold terminal control sequences (ESC [ … m, an OSC 8 hyperlink, a title change) or HTML
(``</details>``, ``<img onerror=…>``) that would act in the reader's terminal or CI page instead
of being read. The text stays readable: each control character becomes its escape."""

from __future__ import annotations

import html
import re

# C0 controls but tab and newline, DEL, and C1 controls (U+009B is a one-character CSI).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character but tab and newline written as its escape (``\\x1b``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def markdown_safe(text: str) -> str:
    """``text`` for a Markdown page rendered as HTML: controls escaped, ``<``, ``>`` and ``&`` as
    entities, so that no tag opens or closes; whitespace folded into one line."""
    return html.escape(" ".join(terminal_safe(text).split()), quote=False)
