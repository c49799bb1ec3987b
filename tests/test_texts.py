"""No strategy in the suite draws text from Hypothesis' default alphabet.

The default (``characters(codec="utf-8")``) costs every fresh process a 4–8 s scan of the
code points (conformance/areas/texts.py says why); ``any_text`` draws the same characters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import conformance
from conformance.areas.texts import ANY_CHARACTER

PACKAGE = Path(conformance.__file__).parent


def _default_alphabet_calls(source: str) -> list[int]:
    """Lines of ``st.text(...)`` / ``st.characters(...)`` calls that leave the alphabet to Hypothesis."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        named = {k.arg for k in node.keywords}
        if node.func.attr == "text" and not node.args and "alphabet" not in named:
            lines.append(node.lineno)
        if node.func.attr == "characters" and "codec" in named:
            lines.append(node.lineno)
    return lines


def test_every_text_strategy_names_its_alphabet() -> None:
    found = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in _default_alphabet_calls(path.read_text(encoding="utf-8"))
    }
    assert not found, f"st.text() with Hypothesis' default alphabet (use areas.texts.any_text): {sorted(found)}"


def test_the_check_sees_a_default_alphabet() -> None:
    assert _default_alphabet_calls("st.text(max_size=3)\nst.text('ab')\nst.characters(codec='utf-8')\n") == [1, 3]


def test_any_character_is_every_code_point_but_the_surrogates() -> None:
    """The replacement keeps what st.text() could draw: all of UTF-8, nothing JSON cannot carry."""
    intervals = ANY_CHARACTER.wrapped_strategy.intervals.intervals  # type: ignore[attr-defined]
    assert intervals == ((0, 0xD7FF), (0xE000, 0x10FFFF))
