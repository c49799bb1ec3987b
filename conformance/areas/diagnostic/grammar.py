"""The allow-list grammar of diagnostic.yaml, compiled into matchers.

Every diagnostic, permission line and start()/dispose() rejection text must be a
sentence of this grammar; anything else is a leak (redaction.yaml). The grammar has no
recursion, so each root compiles to one regular expression; integer ranges are checked
after the match, since a regular expression cannot say "at most 65535".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_CANONICAL_INTEGER = r"(0|[1-9][0-9]*)"


class GrammarError(ValueError):
    """The grammar table refers to something the spec does not define."""


@dataclass(frozen=True)
class Matcher:
    """One root symbol, compiled."""

    symbol: str
    pattern: re.Pattern[str]
    ranges: tuple[tuple[int, int], ...]  # per capturing group, in order

    def matches(self, text: str) -> bool:
        found = self.pattern.fullmatch(text)
        if found is None:
            return False
        for value, (low, high) in zip(found.groups(), self.ranges, strict=True):
            if value is not None and not low <= int(value) <= high:
                return False
        return True


class _Compiler:
    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.rules: dict[str, list[list[Any]]] = {}
        for row in spec.table("diagnostic", "grammar").rows:
            self.rules.setdefault(row["symbol"], []).append(row["sequence"])
        self.ranges: list[tuple[int, int]] = []

    def symbol(self, name: str, stack: tuple[str, ...] = ()) -> str:
        if name not in self.rules:
            raise GrammarError(f"grammar symbol {name!r} is used but has no production")
        if name in stack:
            raise GrammarError(f"grammar symbol {name!r} refers to itself")
        return "(?:" + "|".join(self.sequence(seq, stack + (name,), None) for seq in self.rules[name]) + ")"

    def sequence(self, items: list[Any], stack: tuple[str, ...], row: dict[str, Any] | None) -> str:
        return "".join(self.item(item, stack, row) for item in items)

    def _vocab(self, ref: str) -> list[str]:
        try:
            return [str(v) for v in self.spec.vocabulary(ref).values]
        except KeyError as exc:
            raise GrammarError(f"grammar refers to unknown vocabulary {ref!r}") from exc

    @staticmethod
    def _alternatives(values: list[str]) -> str:
        return "(?:" + "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)) + ")"

    def item(self, item: dict[str, Any], stack: tuple[str, ...], row: dict[str, Any] | None) -> str:
        kind: str
        value: Any
        kind, value = next(iter(item.items())) if len(item) == 1 else ("column", item)
        if kind == "literal":
            return re.escape(str(value))
        if kind == "vocab":
            return self._alternatives(self._vocab(value))
        if kind == "symbol":
            return self.symbol(value, stack)
        if kind == "optional":
            return "(?:" + self.sequence(value, stack, row) + ")?"
        if kind == "choice":
            return "(?:" + "|".join(self.sequence(seq, stack, row) for seq in value) + ")"
        if kind == "integer":
            self.ranges.append((value["minimum"], value["maximum"]))
            return _CANONICAL_INTEGER
        if kind == "row":
            return self.row(value, stack)
        if kind == "column":
            return self.column(item, row)
        raise GrammarError(f"unknown grammar item {item!r}")

    def row(self, spec_row: dict[str, Any], stack: tuple[str, ...]) -> str:
        area, _, name = spec_row["table"].partition(".")
        try:
            table = self.spec.table(area, name)
        except KeyError as exc:
            raise GrammarError(f"grammar refers to unknown table {spec_row['table']!r}") from exc
        alternatives = []
        for row in table.rows:
            # a row item may hold an integer, whose group must be counted once per alternative
            alternatives.append(self.sequence(spec_row["sequence"], stack, row))
        return "(?:" + "|".join(alternatives) + ")"

    def column(self, item: dict[str, Any], row: dict[str, Any] | None) -> str:
        if row is None:
            raise GrammarError(f"grammar item {item!r} reads a column outside a row item")
        if item["column"] not in row:
            raise GrammarError(f"grammar reads column {item['column']!r}, which the table does not have")
        cell = row[item["column"]]
        values = [str(v) for v in (cell if isinstance(cell, list) else [cell])]
        if "within" in item:
            allowed = set(self._vocab(item["within"]))
            values = [v for v in values if v in allowed]
        return self._alternatives(values) if values else "(?!)"


def compile_root(spec: Any, symbol: str) -> Matcher:
    compiler = _Compiler(spec)
    pattern = compiler.symbol(symbol)
    return Matcher(symbol, re.compile(pattern, re.DOTALL), tuple(compiler.ranges))


def roots(spec: Any) -> dict[tuple[str, str], Matcher]:
    """``(product, text kind) -> matcher`` for every row of ``grammar_roots``."""
    return {
        (row["product"], row["kind"]): compile_root(spec, row["symbol"])
        for row in spec.table("diagnostic", "grammar_roots").rows
    }


def compile_alternative(spec: Any, index: int) -> Matcher:
    """Row ``index`` of table ``grammar`` alone: one alternative of its symbol, compiled."""
    row = spec.table("diagnostic", "grammar").rows[index]
    compiler = _Compiler(spec)
    pattern = compiler.sequence(row["sequence"], (row["symbol"],), None)
    return Matcher(row["symbol"], re.compile(pattern, re.DOTALL), tuple(compiler.ranges))
