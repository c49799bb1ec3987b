"""The pieces every generated page is made of: links to stable anchors, wrapped prose, and
values shown exactly (whitespace and control characters visible) or, past a limit, linked
to the line of the spec file that holds them.
"""

from __future__ import annotations

import json
import posixpath
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.spec import Column, Spec, Table
from conformance.spec.links import ID_PATTERN
from conformance.spec.yamlpos import Located, Path_, load_located

INLINE_LIMIT = 300  # characters: a longer value is linked to its file:line, not shown
WIDTH = 100  # prose is wrapped to this many characters
ELIDED = "in the spec file"  # the words of every elision marker, and only of them
REQUIREMENT_ID = ID_PATTERN  # the one pattern the reports and the matrix link by too
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
_MARKER = re.compile(r"\*\([\d,]+ characters, " + ELIDED + r": \[[^\]]*\]\([^)]*\)\)\*")


def to_json(value: Any) -> str:
    """A value as compact JSON, non-ASCII kept, so ``"\\n"`` and ``"\\t"`` stay visible."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def code(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _spans(text: str) -> str:
    """``text`` as a code span with the whitespace at its ends outside it (a span would trim it)."""
    core = text.strip()
    if not core:
        return text
    start = text.index(core)
    return f"{text[:start]}{code(core)}{text[start + len(core) :]}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def is_literal(value: Any) -> bool:
    """Whether a string is exact text whose edges or control characters matter (``"Error: "``)."""
    if not isinstance(value, str):
        return False
    return value != value.strip() or any(ord(ch) < 32 or ch == "\x7f" for ch in value) or "  " in value


def text_recipe(recipe: Any) -> str:
    """A short readable form of a ``text`` cell: ``"x" × 4097``, ``A + B``, ``U+0009 U+000A``."""
    if isinstance(recipe, str):
        return to_json(recipe)
    if "repeat" in recipe:
        inner = text_recipe(recipe["repeat"])
        return f"{inner} × {recipe['times']}" if " " not in inner else f"({inner}) × {recipe['times']}"
    if "concat" in recipe:
        return " + ".join(text_recipe(part) for part in recipe["concat"]) or '""'
    return " ".join(f"U+{cp:04X}" for cp in recipe["codepoints"])


def wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """A paragraph wrapped at spaces, never inside a code span or a link."""
    protected: list[str] = []

    def keep(match: re.Match[str]) -> str:
        # a placeholder as long as what it stands for, so that the width is measured right
        protected.append(match.group(0).replace("\n", " "))
        token = f"\x00{len(protected) - 1}\x01"
        return token + "\x02" * max(0, len(match.group(0)) - len(token))

    flat = _LINK.sub(keep, _MARKER.sub(keep, " ".join(_CODE_SPAN.sub(keep, text).split())))
    lines = textwrap.wrap(
        flat,
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]

    def restore(line: str) -> str:
        while "\x00" in line:
            line = re.sub("\x00(\\d+)\x01\x02*", lambda m: protected[int(m.group(1))], line)
        return line

    return [restore(line) for line in lines]


def bullet(text: str, marker: str = "- ") -> list[str]:
    """A list item wrapped under its marker."""
    lines = wrap(text, indent=" " * len(marker))
    return [marker + lines[0][len(marker) :], *lines[1:]]


@cache
def _located(root: Path, file: str) -> Located:
    return load_located(root / file)


@dataclass
class Site:
    """Where every anchor of the generated docs lives, and how one page links to another.

    Requirement anchors are the IDs themselves (``#SEL-003``); tables and vocabularies get
    ``#table-<name>`` and ``#vocab-<name>`` on their area's page. Nothing is derived from a
    title, so a retitled rule keeps its links.
    """

    spec: Spec
    root: Path  # the repository root the spec folder sits in
    elided: list[tuple[str, int, int]] = field(default_factory=list)  # (file, line, length) of every elision
    areas: dict[str, str] = field(default_factory=dict)  # requirement ID -> its area
    _literal_columns: dict[tuple[str, str, str], bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.areas = {req.id: req.area for req in self.spec.requirements()}

    def area_page(self, area: str) -> PurePosixPath:
        return PurePosixPath("contract") / f"{area}.md"

    def _rel(self, page: PurePosixPath, target: PurePosixPath) -> str:
        if target == page:
            return ""
        return posixpath.relpath(str(target), str(page.parent))

    def requirement_href(self, page: PurePosixPath, rid: str) -> str:
        return f"{self._rel(page, self.area_page(self.areas[rid]))}#{rid}"

    def table_href(self, page: PurePosixPath, area: str, name: str) -> str:
        return f"{self._rel(page, self.area_page(area))}#table-{name}"

    def vocab_href(self, page: PurePosixPath, ref: str, area: str) -> str:
        vocab = self.spec.vocabulary(ref, area)
        return f"{self._rel(page, self.area_page(vocab.area))}#vocab-{vocab.name}"

    def file_href(self, page: PurePosixPath, path: str, line: int | None = None) -> str:
        # pages sit in docs/, files in the repository: one more level up
        href = "/".join([".."] * (len(page.parent.parts) + 1) + [path])
        return href + (f"#L{line}" if line else "")

    def spec_path(self, area_file: str) -> str:
        return f"{self.spec.root.relative_to(self.root).as_posix()}/{area_file}"

    def line(self, area_file: str, path: Path_) -> int:
        return _located(self.spec.root, area_file).line_of(path)

    # ------------------------------------------------------------------ prose

    def link_ids(self, page: PurePosixPath, text: str) -> str:
        """Every requirement ID in ``text`` (a code span holding only an ID included) as a link
        to its anchor; IDs inside other code spans or links are left alone."""

        def link(rid: str) -> str:
            return f"[{rid}]({self.requirement_href(page, rid)})" if rid in self.areas else rid

        out = []
        at = 0
        for match in re.finditer(rf"{_CODE_SPAN.pattern}|{_LINK.pattern}", text, re.DOTALL):
            out.append(REQUIREMENT_ID.sub(lambda m: link(m.group(0)), text[at : match.start()]))
            span = match.group(0)
            inner = match.group(2)
            out.append(link(inner) if inner is not None and REQUIREMENT_ID.fullmatch(inner.strip()) else span)
            at = match.end()
        out.append(REQUIREMENT_ID.sub(lambda m: link(m.group(0)), text[at:]))
        return "".join(out)

    def prose(self, page: PurePosixPath, text: str, indent: str = "") -> list[str]:
        return wrap(self.link_ids(page, text), indent=indent)

    def source(self, page: PurePosixPath, source: dict[str, str]) -> str:
        """One source of a statement (a seed, an upstream line, a product artefact, a decision)."""
        kind = next(k for k in ("seed", "upstream", "product", "decision") if k in source)
        if kind == "seed":
            path = f"{self.spec_path('seeds')}/{source['seed']}"
            text = f"seed [{source['seed']}]({self.file_href(page, path)})"
        else:
            text = f"{kind} {self.quoted(page, source[kind])}"
        return text + (f" — {source['note']}" if "note" in source else "")

    def quoted(self, page: PurePosixPath, text: str) -> str:
        """``text`` verbatim in code spans, except its requirement IDs, which are links between
        them: a quoted source that names a requirement reaches it like prose does."""
        out = []
        at = 0
        for match in REQUIREMENT_ID.finditer(text):
            if (rid := match.group(0)) in self.areas:
                out += [_spans(text[at : match.start()]), f"[{rid}]({self.requirement_href(page, rid)})"]
                at = match.end()
        return "".join([*out, _spans(text[at:])])

    def ids(self, page: PurePosixPath, rids: Any) -> str:
        return ", ".join(f"[{rid}]({self.requirement_href(page, rid)})" for rid in rids)

    # ------------------------------------------------------------------ values

    def exact(self, page: PurePosixPath, shown: str, area_file: str, path: Path_) -> str:
        """``shown`` as a code span, or, past the inline limit, a link to where the value is."""
        if len(shown) <= INLINE_LIMIT:
            return code(shown)
        line = self.line(area_file, path)
        self.elided.append((area_file, line, len(shown)))
        where = f"{self.spec_path(area_file)}:{line}"
        href = self.file_href(page, self.spec_path(area_file), line)
        return f"*({len(shown):,} characters, {ELIDED}: [{where}]({href}))*"

    def value(self, page: PurePosixPath, table: Table, column: Column, value: Any, path: Path_) -> str:
        """One cell as a reader should see it: links for IDs, exact text for literals and data."""
        file = self.spec.areas[table.area].file
        if value is None:
            return code("null")
        if column.type == "requirements":
            return self.ids(page, value)
        if column.type == "text":
            return self.exact(page, text_recipe(value), file, path)
        if column.type == "vocab":
            values = value if column.many else [value]
            return ", ".join(code(str(v)) for v in values)
        if column.type in ("json", "boolean", "integer"):
            return self.exact(page, to_json(value), file, path)
        key = (table.area, table.name, column.name)
        if key not in self._literal_columns:
            self._literal_columns[key] = any(is_literal(row.get(column.name)) for row in table.rows)
        if self._literal_columns[key]:
            return self.exact(page, to_json(value), file, path)
        return self.link_ids(page, " ".join(str(value).split()))
