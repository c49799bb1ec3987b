"""Exact blame: a failure names the requirement(s) it demonstrates, and explains itself.

A test's ``requirement`` markers say what it *can* check (coverage); a failure says what it
*shows*. Checks raise :class:`Violation` with the requirement IDs the failing rule, table row
or vector decides, the operation, its input, and the expected and actual values. The adapter
layer's own failures carry the adapter-protocol requirement they break (see
:func:`blamed_requirements`). The plugin reads the blame off the exception once, and the
terminal, the JSON report, the Markdown summary, JUnit properties and ``--expected-failures``
all use that one answer.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.spec import Spec, load_spec

_SHOWN = 2000  # how much of a long value a failure prints inline (the report keeps it whole)
_WINDOW = 40  # characters shown either side of the first difference of two long texts


_PLAIN = 40  # characters: a short value is shown whole, `expected "aborted", got "max-tokens"`
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, a surrogate is always alone


def printable(text: str) -> str:
    """``text`` with every lone surrogate written as its escape ("\\ud83d"): an adapter's value
    may hold one (a JSON line may carry it, a JavaScript string cut in a pair leaves one), and no
    terminal, UTF-8 file or XML report can carry it raw. The escape is valid inside JSON strings."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def utf8_size(text: str) -> int:
    """UTF-8 bytes of ``text``, a lone surrogate counted as the 3 bytes a lenient encoder writes."""
    return len(text.encode("utf-8", "surrogatepass"))


def dump(value: Any) -> str:
    return printable(json.dumps(value, ensure_ascii=False, sort_keys=False, default=repr))


class Violation(AssertionError):
    """A check failed: ``requirements`` is what the failure demonstrates, nothing wider."""

    def __init__(
        self,
        requirements: Iterable[str],
        *,
        operation: str | None,
        input: Any = None,
        expected: Any = None,
        actual: Any = None,
        detail: str = "",
        sections: Mapping[str, str] | None = None,
        consequences: Iterable[str] = (),
    ) -> None:
        self.requirements = tuple(dict.fromkeys(requirements))
        # Requirements violated only because a rule among the others broke (a table's "golden
        # vectors hold" after the rule that tells the row from the answer): listing that rule as
        # an expected failure covers them too.
        self.consequences = tuple(c for c in dict.fromkeys(consequences) if c in self.requirements)
        if not self.requirements:
            raise ValueError("a Violation must name at least one requirement")
        self.operation = operation
        self.input = input
        self.expected = expected
        self.actual = actual
        if not detail and expected == actual:
            detail = "expected and actual are equal: the difference lies in what the sections show"
        self.detail = printable(detail or difference(expected, actual))
        self.sections = {printable(k): printable(v) for k, v in (sections or {}).items()}
        super().__init__(printable(self.explain()))

    def record(self, spec: Spec | None = None) -> dict[str, Any]:
        """The failure as the JSON report carries it (spec/schema/report.json#/$defs/failure)."""
        return {
            "requirements": requirement_records(self.requirements, spec),
            "operation": self.operation,
            "input": self.input,
            "expected": self.expected,
            "actual": self.actual,
            "difference": self.detail,
            "sections": self.sections,
        }

    def explain(self, spec: Spec | None = None) -> str:
        lines = []
        for req in requirement_records(self.requirements, spec):
            lines.append(f"violates {req['id']} ({req['level']}) {req['title']}: {' '.join(req['text'].split())}")
        if self.operation is not None:
            lines.append(f"operation: {self.operation}")
            lines.append(f"input: {_shown(self.input)}")
        lines.append(f"expected: {_shown(self.expected)}")
        lines.append(f"actual: {_shown(self.actual)}")
        if self.detail:
            lines.append(f"difference: {self.detail}")
        for title, text in self.sections.items():  # verbatim, so that a printed vector pastes as it is
            lines.append(f"{title}:")
            lines.extend(text.splitlines())
        return "\n".join(lines)


def requirement_records(ids: Sequence[str], spec: Spec | None = None) -> list[dict[str, str]]:
    spec = spec or load_spec()
    out = []
    for rid in ids:
        try:
            req = spec.requirement(rid)
        except KeyError:
            out.append({"id": rid, "level": "?", "title": "(not in the spec)", "text": ""})
            continue
        out.append({"id": req.id, "level": req.level, "title": req.title, "text": " ".join(req.text.split())})
    return out


def expect(
    requirements: Iterable[str],
    operation: str | None,
    input: Any,
    expected: Any,
    actual: Any,
    *,
    sections: Mapping[str, str] | None = None,
) -> None:
    """Raise a :class:`Violation` of ``requirements`` unless ``actual == expected``."""
    if actual != expected:
        raise Violation(
            requirements, operation=operation, input=input, expected=expected, actual=actual, sections=sections
        )


def pasteable_row(what: str, fields: Mapping[str, Any], depth: int = 0) -> str:
    """A failing example as a row of a spec vector table, ready to paste under its ``rows:``: a
    mapping one key a line, a ``steps`` list one step a line, every other value as JSON."""
    pad = " " * (8 + 2 * depth)
    lines = (
        []
        if depth
        else ["      - name: found-by-hypothesis", f'        description: "{what}; describe what it shows."']
    )
    for key, value in fields.items():
        if isinstance(value, dict) and depth == 0:
            lines += [f"{pad}{key}:", pasteable_row(what, value, depth + 1)]
        elif key == "steps" and isinstance(value, list):
            lines.append(f"{pad}steps:" + ("" if value else " []"))
            lines.extend(f"{pad}  - {dump(step)}" for step in value)
        else:
            lines.append(f"{pad}{key}: {dump(value)}")
    return "\n".join(lines)


PASTE_SECTION = "as a "  # a section offering a found example as a row to paste: "as a settle vector (…)"


@contextlib.contextmanager
def golden_vector(
    spec: Spec, area: str, table: str, row: Mapping[str, Any], operations: Collection[str] = ()
) -> Iterator[None]:
    """Check one golden vector of ``area.table``: a violation of an answer the row states (of one
    of ``operations``; any, when none are named) is also a violation of the requirement(s) the
    table says its vectors hold (SEL-027, RES-018, …), after the rule that tells the row's value
    from the adapter's; and it is labelled as that vector (its name in the spec), not offered as
    a newly found row to paste, since the spec has it already. A violation of another operation
    the check asks along the way (an answer the row does not state) passes through unchanged."""
    try:
        yield
    except Violation as found:
        if operations and found.operation not in operations:
            raise
        where = f"spec/{spec.areas[area].file}, table {table}"
        label = "\n".join(f"{key}: {dump(row[key])}" for key in ("name", "description") if key in row)
        sections = {k: v for k, v in found.sections.items() if not k.startswith(PASTE_SECTION)}
        raise Violation(
            [*found.requirements, *spec.table(area, table).requirements],
            operation=found.operation,
            input=found.input,
            expected=found.expected,
            actual=found.actual,
            detail=found.detail,
            sections={f"golden vector ({where})": label, **sections},
            consequences=[r for r in spec.table(area, table).requirements if r not in found.requirements],
        ).with_traceback(found.__traceback__) from None


def _shown(value: Any) -> str:
    text = dump(value)
    return (
        text if len(text) <= _SHOWN else text[:_SHOWN] + f"… ({len(text)} characters in all; the report has it whole)"
    )


# --------------------------------------------------------------------------- located differences


def difference(expected: Any, actual: Any) -> str:
    """Where two values first differ, short enough to read: a JSON path, and for texts the first
    differing character (with both lengths in characters and in UTF-8 bytes)."""
    return "; ".join(_differences(expected, actual, "")[:5])


def _differences(expected: Any, actual: Any, path: str) -> list[str]:
    here = path or "(the whole value)"
    if expected == actual:
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{sub}: missing (expected {_short(expected[key])})")
            elif key not in expected:
                out.append(f"{sub}: unexpected (got {_short(actual[key])})")
            else:
                out += _differences(expected[key], actual[key], sub)
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{here}: {len(expected)} item(s) expected, got {len(actual)}"] + [
                d
                for i, (e, a) in enumerate(zip(expected, actual, strict=False))
                for d in _differences(e, a, f"{path}[{i}]")
            ][:2]
        return [
            d for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for d in _differences(e, a, f"{path}[{i}]")
        ]
    if isinstance(expected, str) and isinstance(actual, str):
        if _plain(expected) and _plain(actual):  # an enum value, a short word: both read whole
            return [f"{here}: expected {dump(expected)}, got {dump(actual)}"]
        return [f"{here}: {text_difference(expected, actual)}"]
    return [f"{here}: expected {_short(expected)}, got {_short(actual)}"]


def text_difference(expected: str, actual: str) -> str:
    """The first differing character of two texts, in context, and both sizes."""
    n = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), min(len(expected), len(actual))
    )
    byte = utf8_size(expected[:n])
    sizes = (
        f"expected {len(expected)} characters / {utf8_size(expected)} UTF-8 bytes, "
        f"got {len(actual)} / {utf8_size(actual)}"
    )
    lo, hi = max(0, n - _WINDOW), n + _WINDOW
    around = f"expected …{dump(expected[lo:hi])}…, got …{dump(actual[lo:hi])}…"
    # Characters that print alike (é and e + U+0301, a space and U+00A0) differ here by code point.
    points = f"expected {_code_point(expected, n)}, got {_code_point(actual, n)}"
    return f"first difference at character {n} (UTF-8 byte {byte}; {points}): {around}; {sizes}"


def _plain(text: str) -> bool:
    """Short printable ASCII: nothing in it prints like something else, so no code point is needed."""
    return len(text) <= _PLAIN and text.isascii() and text.isprintable()


def _code_point(text: str, n: int) -> str:
    return f"U+{ord(text[n]):04X}" if n < len(text) else "the end"


def _short(value: Any) -> str:
    text = dump(value)
    return text if len(text) <= 120 else text[:120] + "…"


# --------------------------------------------------------------------------- reading blame off an exception


def violations(exc: BaseException) -> list[BaseException]:
    """The leaf failures of ``exc`` (Hypothesis raises an ExceptionGroup for several distinct bugs)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in violations(inner)]
    return [exc]


def blamed_requirements(exc: BaseException) -> tuple[str, ...] | None:
    """The requirements a failure demonstrates, or None when it carries no attribution (a failure
    of the suite itself, or a check not yet attributed): then the test's markers are blamed."""
    found: list[str] = []
    for leaf in violations(exc):
        ids = getattr(leaf, "requirements", None)
        if not isinstance(ids, tuple) or not ids:
            return None
        found += ids
    return tuple(dict.fromkeys(found)) or None


def rule_requirements(exc: BaseException) -> tuple[str, ...] | None:
    """The blamed requirements without those a failure violates only as a consequence of another
    it names (``Violation.consequences``): what an expected-failure entry must list."""
    blamed = blamed_requirements(exc)
    if blamed is None:
        return None
    follow = {c for leaf in violations(exc) for c in getattr(leaf, "consequences", ())}
    return tuple(r for r in blamed if r not in follow) or blamed


def failure_records(exc: BaseException, spec: Spec | None = None) -> list[dict[str, Any]]:
    """Every leaf failure as the report carries it."""
    out = []
    for leaf in violations(exc):
        if isinstance(leaf, Violation):
            record = leaf.record(spec)
        else:
            ids = getattr(leaf, "requirements", None) or ()
            record = {
                "requirements": requirement_records(tuple(ids), spec),
                "operation": getattr(leaf, "operation", None),
                "input": getattr(leaf, "input", None),
                "expected": None,
                "actual": None,
                "difference": f"{type(leaf).__name__}: {leaf}"[:_SHOWN],
                "sections": {},
            }
        notes = [n for n in getattr(leaf, "__notes__", ()) if isinstance(n, str)]
        if notes:
            record["sections"] = {**record["sections"], "notes": "\n".join(notes)[: _SHOWN * 4]}
        out.append(record)
    return out
