"""The provider-upgrade gate: read the official unions of a product version and compare them
with the unions the spec maps for the locked version.

Codex: ``codex app-server generate-json-schema --out DIR`` writes the protocol's JSON Schemas;
CodexErrorInfo is ``definitions.CodexErrorInfo`` of ``v2/ErrorNotification.json`` (a oneOf in
0.147.0; newer versions use anyOf and add a catch-all member, which is reported as a member of
its own, since it admits every value). Claude Code: ``SDKResultMessage`` of the Agent SDK's
``sdk.d.ts`` is a union of object types; each member's ``subtype`` is a union of string
literals. The spec keeps the locked unions as vocabularies (codex.variant,
codex.http_status_variant, claude-code.result_subtype, claude-code.error_subtype).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.products.packages import Installed, install, locked, resolve_version, run_command
from conformance.spec import Spec

Json = Any

CODEX_SCHEMA_FILE = "v2/ErrorNotification.json"
CODEX_DEFINITION = "CodexErrorInfo"
CLAUDE_TYPES_FILE = "sdk.d.ts"
CLAUDE_RESULT_UNION = "SDKResultMessage"
CLAUDE_ERROR_TYPE = "SDKResultError"


class UnionError(Exception):
    """The installed version does not have its union where this gate reads it."""


@dataclass(frozen=True)
class Union:
    """One official union: its name, the spec vocabulary that maps it, where it was read, its members."""

    name: str
    vocabulary: str
    source: str
    members: list[str]
    notes: list[str] = field(default_factory=list)


# ---- Codex: the generated JSON Schema


def _resolve(document: Json, node: Json) -> Json:
    """Follow a local ``$ref`` (``#/definitions/X``) once."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target = document
    for part in ref[2:].split("/"):
        target = target[part]
    return target


def _catch_all(member: Json) -> str:
    kinds = member.get("type", "any value") if isinstance(member, dict) else "any value"
    return f"(catch-all: {'|'.join(kinds) if isinstance(kinds, list) else kinds})"


def codex_unions(schema_dir: Path) -> list[Union]:
    """CodexErrorInfo (string and one-key object variants) and its variants that carry httpStatusCode."""
    file = schema_dir / CODEX_SCHEMA_FILE
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnionError(f"cannot read {CODEX_SCHEMA_FILE} of the generated schema: {exc}") from None
    definitions = document.get("definitions") or document.get("$defs") or {}
    info = definitions.get(CODEX_DEFINITION)
    if not isinstance(info, dict):
        raise UnionError(f"{CODEX_SCHEMA_FILE} has no definitions.{CODEX_DEFINITION}")
    keyword = next((k for k in ("oneOf", "anyOf") if isinstance(info.get(k), list)), None)
    if keyword is None:
        raise UnionError(f"definitions.{CODEX_DEFINITION} is neither a oneOf nor an anyOf")
    members: list[str] = []
    with_status: list[str] = []
    notes = [] if keyword == "oneOf" else [f"the union is {keyword} (its members may overlap), not oneOf"]
    for raw in info[keyword]:
        member = _resolve(document, raw)
        required = member.get("required") if isinstance(member, dict) else None
        properties = member.get("properties") if isinstance(member, dict) else None
        if isinstance(member, dict) and isinstance(member.get("enum"), list):
            members += [str(v) for v in member["enum"]]
        elif isinstance(member, dict) and "const" in member:
            members.append(str(member["const"]))
        elif (
            isinstance(required, list) and len(required) == 1 and isinstance(properties, dict) and len(properties) == 1
        ):
            [name] = required
            members.append(name)
            detail = _resolve(document, properties.get(name, {}))
            if "httpStatusCode" in (detail.get("properties") or {}):
                with_status.append(name)
        else:
            members.append(_catch_all(member))
            notes.append(f"member {json.dumps(raw)} admits values outside the named variants")
    source = f"{CODEX_SCHEMA_FILE} definitions.{CODEX_DEFINITION}"
    return [
        Union(CODEX_DEFINITION, "codex.variant", source, members, notes),
        Union(f"{CODEX_DEFINITION} variants with httpStatusCode", "codex.http_status_variant", source, with_status),
    ]


def codex_schema(installed: Installed, folder: Path) -> Path:
    """Run the installed app-server's schema generator into ``folder``."""
    done = run_command([str(installed.binary), "app-server", "generate-json-schema", "--out", str(folder)], 120)
    if done.returncode != 0:
        raise UnionError(
            f"`codex app-server generate-json-schema` exited with {done.returncode}: {done.stderr.strip()}"
        )
    return folder


# ---- Claude Code: the SDK's TypeScript declarations


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
_LITERAL = re.compile(r"""^(['"])(.*)\1$""")


def _split(text: str, start: int, stop_at_brace: bool) -> tuple[list[str], int]:
    """Scan from ``start``: the pieces separated by ";" at nesting depth 0 (quotes skipped), up to
    the first ";" at depth 0, or (``stop_at_brace``) the brace that closes depth 0. Returns the
    pieces and where the scan stopped."""
    depth, quote, begin, pieces = 0, "", start, []
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if char == quote and text[index - 1] != "\\":
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char in "{([":
            depth += 1
        elif char in "})]":
            depth -= 1
            if depth < 0 and stop_at_brace:
                pieces.append(text[begin:index])
                return pieces, index
        elif char == ";" and depth == 0:
            pieces.append(text[begin:index])
            if not stop_at_brace:
                return pieces, index
            begin = index + 1
    raise UnionError(f"{CLAUDE_TYPES_FILE}: a declaration does not end")


def _alias(text: str, name: str) -> str:
    """The right-hand side of ``type NAME = ...;``, or ``{...}`` of ``interface NAME {...}``."""
    match = re.search(rf"\b(?:type\s+{re.escape(name)}\s*=|interface\s+{re.escape(name)}\s*\{{)", text)
    if match is None:
        raise UnionError(f"{CLAUDE_TYPES_FILE} declares no type {name}")
    if match.group(0).endswith("{"):
        _, end = _split(text, match.end(), stop_at_brace=True)
        return "{" + text[match.end() : end] + "}"
    [rhs], _ = _split(text, match.end(), stop_at_brace=False)
    return rhs.strip()


def _top_level_property(body: str, name: str) -> str:
    """The type of property ``name`` at the top level of an object type ``{ ... }``."""
    if not body.startswith("{"):
        raise UnionError(f"expected an object type, found {body[:60]!r}")
    pieces, _ = _split(body, 1, stop_at_brace=True)
    for piece in pieces:
        key, colon, value = piece.partition(":")
        if colon and key.strip().removeprefix("readonly ").strip().rstrip("?") == name:
            return value.strip()
    raise UnionError(f"no top-level property {name!r}")


def _literals(type_text: str, where: str) -> list[str]:
    values = []
    parts = type_text.split("|")
    for part in parts[1:] if not parts[0].strip() else parts:  # a leading "|" of a multi-line union
        match = _LITERAL.match(part.strip())
        if match is None:
            raise UnionError(f"{where}: {part.strip()!r} is not a string literal")
        values.append(match.group(2))
    return values


def claude_unions(declarations: str) -> list[Union]:
    """The subtype union of SDKResultMessage, and that of its SDKResultError member."""
    text = _COMMENTS.sub("", declarations)
    members = [part.strip() for part in _alias(text, CLAUDE_RESULT_UNION).split("|") if part.strip()]
    bad = [m for m in members if not _IDENTIFIER.match(m)]
    if bad:
        raise UnionError(f"{CLAUDE_RESULT_UNION} has members that are not type names: {bad}")
    subtypes: dict[str, list[str]] = {}
    for member in members:
        where = f"{CLAUDE_TYPES_FILE} {member}.subtype"
        try:
            subtypes[member] = _literals(_top_level_property(_alias(text, member), "subtype"), where)
        except UnionError as exc:
            raise UnionError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
    if CLAUDE_ERROR_TYPE not in subtypes:
        raise UnionError(f"{CLAUDE_RESULT_UNION} no longer has the member {CLAUDE_ERROR_TYPE}")
    source = f"{CLAUDE_TYPES_FILE} {CLAUDE_RESULT_UNION} = {' | '.join(members)}"
    return [
        Union(
            f"{CLAUDE_RESULT_UNION}.subtype",
            "claude-code.result_subtype",
            source,
            [s for m in members for s in subtypes[m]],
        ),
        Union(
            f"{CLAUDE_ERROR_TYPE}.subtype",
            "claude-code.error_subtype",
            f"{CLAUDE_TYPES_FILE} {CLAUDE_ERROR_TYPE}",
            subtypes[CLAUDE_ERROR_TYPE],
        ),
    ]


# ---- the comparison


def compare(spec: Spec, union: Union) -> Json:
    """One union against its vocabulary: added (official order) and removed (spec order)."""
    locked_members = [str(v) for v in spec.vocabulary(union.vocabulary).values]
    entry: Json = {
        "name": union.name,
        "vocabulary": union.vocabulary,
        "source": union.source,
        "official": union.members,
        "added": [m for m in union.members if m not in locked_members],
        "removed": [m for m in locked_members if m not in union.members],
    }
    if union.notes:
        entry["notes"] = union.notes
    return entry


def official_unions(installed: Installed) -> list[Union]:
    if installed.product == "codex":
        with tempfile.TemporaryDirectory(prefix="codex-schema-") as folder:
            return codex_unions(codex_schema(installed, Path(folder)))
    declarations = installed.package_dir / CLAUDE_TYPES_FILE
    try:
        return claude_unions(declarations.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UnionError(f"cannot read {declarations}: {exc}") from None


def upgrade_check(
    spec: Spec, product: str, version: str, root: Path | None = None, log: Callable[[str], None] = lambda _: None
) -> Json:
    """Install ``version`` (cached) and compare its official unions with the spec's locked ones."""
    package, locked_version = locked(spec, product)
    exact = resolve_version(package, version)
    installed, _ = install(product, package, exact, root, log)
    unions = [compare(spec, union) for union in official_unions(installed)]
    return {
        "product": product,
        "package": package,
        "locked_version": locked_version,
        "version": exact,
        "product_version": installed.product_version,
        "equal": not any(u["added"] or u["removed"] for u in unions),
        "unions": unions,
    }


def render(report: Json) -> str:
    """The human form of an upgrade-check report."""
    lines = [
        f"upgrade-check {report['product']}: {report['package']} {report['version']} "
        f"({report['product_version']}) against the spec's locked {report['locked_version']}"
    ]
    for union in report["unions"]:
        changed = union["added"] or union["removed"]
        lines.append(
            f"{union['name']} -> spec vocabulary {union['vocabulary']} ({union['source']}): "
            + ("DIFFERS" if changed else f"unchanged, {len(union['official'])} members")
        )
        lines += [f"  + {m}" for m in union["added"]]
        lines += [f"  - {m}" for m in union["removed"]]
        lines += [f"  note: {n}" for n in union.get("notes", [])]
    added = sum(len(u["added"]) for u in report["unions"])
    removed = sum(len(u["removed"]) for u in report["unions"])
    if report["equal"]:
        lines.append(f"EQUAL: {report['version']} declares exactly the unions the spec maps")
    else:
        lines.append(
            f"DIFFERENT: {added} added, {removed} removed; the spec (locked version, vocabularies and the "
            "tables that map them) must be updated before the locked version is bumped"
        )
    return "\n".join(lines)
