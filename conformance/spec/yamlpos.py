"""YAML loading that remembers where every value came from.

Spec errors must name the file, the line and the field; PyYAML's plain loader forgets
positions and silently accepts duplicate keys, so this walks the composed node tree.
"""

from __future__ import annotations

import hashlib
import marshal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Path_ = tuple[str | int, ...]

# libyaml's composer is several times faster; the pure-Python one is the same grammar.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Located:
    """A loaded document and the 1-based line of every value, keyed by its path."""

    data: Any
    lines: dict[Path_, int]

    def line_of(self, path: Path_) -> int:
        """The line of the value at ``path``, or of its nearest located ancestor."""
        for cut in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:cut]))
            if line is not None:
                return line
        return 1


class YamlError(ValueError):
    """A file that is not well-formed YAML of the kind the spec accepts."""

    def __init__(self, file: Path, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file = file
        self.line = line
        self.message = message


def format_path(path: Path_) -> str:
    """``('tables', 'variants', 'rows', 3, 'wire')`` -> ``tables.variants.rows[3].wire``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


_PARSED: dict[bytes, tuple[bytes, dict[Path_, int]]] = {}  # text digest -> (marshalled data, lines)
_PARSED_KEEP = 64


def load_located(file: Path) -> Located:
    """Parse one YAML document; reject aliases, duplicate keys and non-string keys.

    A text parsed before in this process is not parsed again: the project's tests load many
    copies of the spec that differ in one file, and parsing is most of a cold load. Each caller
    gets its own copy of the data."""
    text = file.read_text(encoding="utf-8")
    key = hashlib.sha256(text.encode("utf-8")).digest()
    if key in _PARSED:
        data, lines = _PARSED[key]
        return Located(marshal.loads(data), dict(lines))
    located = _parse(file, text)
    try:
        kept = marshal.dumps(located.data)
    except ValueError:  # a YAML timestamp: not kept, parsed again next time
        return located
    if len(_PARSED) >= _PARSED_KEEP:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = (kept, dict(located.lines))
    return located


def _parse(file: Path, text: str) -> Located:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlError(file, line, f"not valid YAML: {exc.problem or exc}") from exc
    if node is None:
        raise YamlError(file, 1, "the file is empty")
    lines: dict[Path_, int] = {}
    constructor = yaml.SafeLoader(text)
    seen: set[int] = set()

    def walk(n: yaml.Node, path: Path_) -> Any:
        if id(n) in seen:
            raise YamlError(file, n.start_mark.line + 1, f"{format_path(path)}: YAML aliases are not allowed")
        seen.add(id(n))
        lines[path] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in n.value:
                key = constructor.construct_object(key_node)
                if not isinstance(key, str):
                    raise YamlError(
                        file, key_node.start_mark.line + 1, f"{format_path(path)}: key {key!r} is not a string"
                    )
                if key == "<<":
                    raise YamlError(
                        file, key_node.start_mark.line + 1, f"{format_path(path)}: merge keys are not allowed"
                    )
                if key in out:
                    raise YamlError(
                        file, key_node.start_mark.line + 1, f"{format_path(path + (key,))}: duplicate key {key!r}"
                    )
                out[key] = walk(value_node, path + (key,))
            return out
        if isinstance(n, yaml.SequenceNode):
            return [walk(item, path + (i,)) for i, item in enumerate(n.value)]
        return constructor.construct_object(n)

    return Located(walk(node, ()), lines)
