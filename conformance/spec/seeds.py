"""Cut the seed notes into statements, so that spec/seeds.yaml can map every one of them.

The cut is deliberately simple and fixed: one piece per non-blank line, and lines are
cut further after a full stop (Chinese 。！？, or English .!? followed by a space and a
capital). spec/seeds.yaml must list exactly these pieces, in order.
"""

from __future__ import annotations

import re
from pathlib import Path

_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s+(?=[A-Z`*\"'(\[])")


def split_statements(text: str) -> list[str]:
    """The statements of one seed note, in order."""
    pieces: list[str] = []
    for line in text.splitlines():
        for piece in _SENTENCE_END.split(line.strip()):
            piece = piece.strip()
            if piece:
                pieces.append(piece)
    return pieces


def seed_statements(seed_file: Path) -> list[str]:
    return split_statements(seed_file.read_text(encoding="utf-8"))
