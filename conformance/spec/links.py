"""Where a requirement is documented: one stable anchor per requirement ID (``#SEL-003``), so
that every ID the docs, the reports and the matrix print can be a link to its rule.

The document (``docs/contract.md``) is the index; each requirement sits on its area's page
beside it (``docs/contract/selection.md#SEL-003``), and a link goes straight there.
"""

from __future__ import annotations

import re

from conformance.spec.model import ID_PREFIXES

DOCUMENT = "docs/contract.md"  # the rendered contract's index, relative to the repository root
ID_PATTERN = re.compile(r"\b(?:SEL|RES|DIA|CC|CDX|RED|ADP|BGD|REL)-\d{3}\b")
_AREAS = {prefix: area for area, prefix in ID_PREFIXES.items()}


def requirement_url(rid: str, base: str = DOCUMENT) -> str:
    """The link to a requirement's anchor, on its area's page beside the index at ``base`` (a path
    or a URL): ``docs/contract.md`` gives ``docs/contract/<area>.md#<ID>``."""
    area = _AREAS.get(rid.split("-", 1)[0])
    if area is None:
        return f"{base}#{rid}"  # an area the spec does not know yet: the index at least
    folder, slash, name = base.rpartition("/")
    return f"{folder}{slash}{name.removesuffix('.md')}/{area}.md#{rid}"


def link_ids(text: str, base: str = DOCUMENT) -> str:
    """Every requirement ID in a Markdown text made a link to its anchor."""
    return ID_PATTERN.sub(lambda m: f"[{m.group(0)}]({requirement_url(m.group(0), base)})", text)
