"""Where a requirement is documented: one stable anchor per requirement ID (``#SEL-003``), so
that every ID the docs, the reports and the matrix print can be a link to its rule."""

from __future__ import annotations

import re

DOCUMENT = "docs/contract.md"  # the rendered contract, relative to the repository root
ID_PATTERN = re.compile(r"\b(?:SEL|RES|DIA|CC|CDX|RED|ADP|BGD)-\d{3}\b")


def requirement_url(rid: str, base: str = DOCUMENT) -> str:
    """The link to a requirement's anchor in the document at ``base`` (a path or a URL)."""
    return f"{base}#{rid}"


def link_ids(text: str, base: str = DOCUMENT) -> str:
    """Every requirement ID in a Markdown text made a link to its anchor."""
    return ID_PATTERN.sub(lambda m: f"[{m.group(0)}]({requirement_url(m.group(0), base)})", text)
