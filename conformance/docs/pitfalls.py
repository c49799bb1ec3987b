"""The guide's pitfalls as data, so that each one can be checked against the spec.

A pitfall is a mistake an adapter author makes, the requirement it breaks, and a golden vector
whose expected answer contradicts the mistake: at ``at`` (a JSON pointer into the operation's
answer) the vector expects ``right``, where the mistake gives ``wrong``; ``also_right`` lists
variants of the right answer the spec accepts too (the reference may give one). In the guide's
template they are a fenced block, ```` ```pitfalls ````, holding a YAML list of such entries;
the renderer turns each into a list item that shows the vector and both values. What the
renderer can check without calling anything, it checks (the requirement exists and the vector
covers it, the vector exists, the values differ); tests/test_guide.py runs each vector's input
through the reference and holds ``right`` to the vector's expected answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from conformance.docs.pages import bullet
from conformance.docs.text import Site, code, text_recipe, to_json
from conformance.spec import Spec, expand_text

FENCE = "```pitfalls"
_KEYS = {"requirement", "operation", "vector", "at", "right", "wrong", "text"}
_OPTIONAL = {"recipe", "also_right"}


class PitfallError(ValueError):
    """A pitfall entry that is not well formed, or names what the spec does not have."""


@dataclass(frozen=True)
class Pitfall:
    """One mistake, the rule it breaks, and the golden vector that tells it from the right answer."""

    requirement: str
    operation: str
    area: str
    table: str
    vector: str
    at: str  # a JSON pointer into the operation's answer ("" is the whole answer)
    right: Any
    wrong: Any
    text: str
    recipe: bool = False  # right and wrong are text recipes (a ``text`` cell's forms), not JSON values
    also_right: tuple[Any, ...] = ()  # variants of ``right`` the spec accepts too (a vector states one)
    line: int = 0  # the template line of its block

    def value(self, which: Any) -> Any:
        """``right`` or ``wrong`` as the answer holds it (a recipe expanded to its string)."""
        return expand_text(which) if self.recipe else which

    def shown(self, which: Any) -> str:
        return text_recipe(which) if self.recipe else to_json(which)


def pick(value: Any, pointer: str) -> Any:
    """The part of ``value`` a JSON pointer (RFC 6901) names; KeyError naming the missing step."""
    if pointer == "":
        return value
    if not pointer.startswith("/"):
        raise KeyError(f"{pointer!r} is not a JSON pointer (it starts with '/', or is '')")
    for token in pointer[1:].split("/"):
        step = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise KeyError(f"the answer has nothing at {pointer!r} (no {step!r})")
    return value


def parse_block(spec: Spec, lines: list[str], line: int) -> list[Pitfall]:
    """The pitfalls of one fenced block (``lines`` between the fences, ``line`` the template
    line of the opening fence), checked against the spec."""
    try:
        entries = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as exc:
        raise PitfallError(f"{line}: the pitfalls block is not YAML: {exc}") from None
    if not isinstance(entries, list) or not entries:
        raise PitfallError(f"{line}: a pitfalls block is a non-empty YAML list")
    return [_entry(spec, entry, line, n) for n, entry in enumerate(entries, 1)]


def _entry(spec: Spec, entry: Any, line: int, n: int) -> Pitfall:
    where = f"{line}: pitfall {n}"
    if not isinstance(entry, dict):
        raise PitfallError(f"{where}: a pitfall is a mapping")
    missing, unknown = _KEYS - entry.keys(), entry.keys() - _KEYS - _OPTIONAL
    if missing or unknown:
        raise PitfallError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)} (keys: {sorted(_KEYS)})")
    parts = str(entry["vector"]).split()
    if len(parts) != 3:
        raise PitfallError(f"{where}: vector is 'AREA TABLE NAME', not {entry['vector']!r}")
    area, table, name = parts
    pitfall = Pitfall(
        requirement=str(entry["requirement"]),
        operation=str(entry["operation"]),
        area=area,
        table=table,
        vector=name,
        at=str(entry["at"]),
        right=entry["right"],
        wrong=entry["wrong"],
        text=" ".join(str(entry["text"]).split()),
        recipe=bool(entry.get("recipe", False)),
        also_right=tuple(entry.get("also_right") or ()),
        line=line,
    )
    problem = _problem(spec, pitfall)
    if problem:
        raise PitfallError(f"{where} ({pitfall.requirement}, vector {name}): {problem}")
    return pitfall


def _problem(spec: Spec, pitfall: Pitfall) -> str | None:
    """What the spec alone shows wrong with a pitfall, or None."""
    if pitfall.requirement not in {r.id for r in spec.requirements()}:
        return f"no requirement {pitfall.requirement} in the spec"
    if pitfall.operation not in spec.vocabulary("adapter-protocol.operation").values:
        return f"no operation {pitfall.operation!r}"
    try:
        rows = spec.table(pitfall.area, pitfall.table).rows
    except KeyError as exc:
        return str(exc.args[0])
    row = next((r for r in rows if r.get("name") == pitfall.vector), None)
    if row is None:
        return f"no vector {pitfall.vector!r} in {pitfall.area}.{pitfall.table}"
    if pitfall.requirement not in (row.get("covers") or ()):
        return f"the vector covers {row.get('covers')}, not {pitfall.requirement}"
    try:
        right, wrong = pitfall.value(pitfall.right), pitfall.value(pitfall.wrong)
    except ValueError as exc:
        return str(exc)
    if right == wrong or wrong in [pitfall.value(v) for v in pitfall.also_right]:
        return "right and wrong are the same value: the vector cannot tell the mistake apart"
    if pitfall.at and not pitfall.at.startswith("/"):
        return f"at {pitfall.at!r} is not a JSON pointer"
    return None


def render(site: Site, page: PurePosixPath, pitfalls: list[Pitfall]) -> list[str]:
    """``Pitfalls:`` and one list item per pitfall: its prose, then the vector that tells it."""
    out = ["Pitfalls:", ""]
    for p in pitfalls:
        where = code(p.at) if p.at else "the answer"
        vector = f"vector {code(p.vector)} of [{p.table}]({site.table_href(page, p.area, p.table)})"
        also = "".join(f" (or {code(p.shown(v))})" for v in p.also_right)
        check = f"{p.requirement}; {vector}: {where} is {code(p.shown(p.right))}{also}, not {code(p.shown(p.wrong))}."
        out += bullet(site.link_ids(page, f"{p.text} ({check})"))
    return [*out, ""]
