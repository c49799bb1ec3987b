"""The provider-upgrade gate, an upgrade's first step: read the official unions of a product
version and compare them with those of the nearest version the spec ships; for a version it does
not ship, draft its ``versions`` entry (:mod:`conformance.products.draft`).

Codex: ``codex app-server generate-json-schema --out DIR`` writes the protocol's JSON Schemas;
CodexErrorInfo is ``definitions.CodexErrorInfo`` of ``v2/ErrorNotification.json`` (a oneOf in
0.147.0; newer versions use anyOf and add a catch-all member, which is reported as a member of
its own, since it admits every value). Claude Code: ``SDKResultMessage`` of the Agent SDK's
``sdk.d.ts`` is a union of object types; each member's ``subtype`` is a union of string
literals. The spec keeps each shipped version's unions as vocabularies (codex.variant,
codex.http_status_variant, claude-code.result_subtype, claude-code.error_subtype) of the
contract at that version (``Spec.at``).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.products.draft import (
    UNION_VOCABULARY,
    catch_all_label,
    decisions,
    draft_entry,
    recorded_catch_alls,
)
from conformance.products.packages import (
    EXACT_VERSION,
    Installed,
    ProductError,
    install,
    resolve_version,
    run_command,
)
from conformance.spec import Spec
from conformance.spec.releases import semver

Json = Any

CODEX_SCHEMA_FILE = "v2/ErrorNotification.json"
CODEX_DEFINITION = "CodexErrorInfo"
CLAUDE_TYPES_FILE = "sdk.d.ts"
CLAUDE_RESULT_UNION = "SDKResultMessage"
CLAUDE_ERROR_TYPE = "SDKResultError"
READ_UNIONS = {
    "codex": (CODEX_DEFINITION, f"{CODEX_DEFINITION} variants with httpStatusCode"),
    "claude-code": (f"{CLAUDE_RESULT_UNION}.subtype", f"{CLAUDE_ERROR_TYPE}.subtype"),
}
"""The names of the unions the gate reads of each product (codex_unions, claude_unions), as table
releases.facts names them."""


class UnionError(Exception):
    """The installed version does not have its union where this gate reads it."""


@dataclass(frozen=True)
class Union:
    """One official union: its name, the spec vocabulary that maps it, where it was read, its
    members (a catch-all member listed by :func:`catch_all_label`), the kind of each named member
    (``string`` or ``object``), the detail schema of each object member, the schema of each
    catch-all member, and the description the schema gives a member."""

    name: str
    vocabulary: str
    source: str
    members: list[str]
    notes: list[str] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)
    details: dict[str, Json] = field(default_factory=dict)
    catch_alls: list[Json] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)


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
    kinds: dict[str, str] = {}
    details: dict[str, Json] = {}
    catch_alls: list[Json] = []
    descriptions: dict[str, str] = {}
    notes = [] if keyword == "oneOf" else [f"the union is {keyword} (its members may overlap), not oneOf"]
    for raw in info[keyword]:
        member = _resolve(document, raw)
        said = member.get("description") if isinstance(member, dict) else None
        required = member.get("required") if isinstance(member, dict) else None
        properties = member.get("properties") if isinstance(member, dict) else None
        if isinstance(member, dict) and isinstance(member.get("enum"), list):
            members += [str(v) for v in member["enum"]]
            kinds |= {str(v): "string" for v in member["enum"]}
            descriptions |= {str(v): said for v in member["enum"] if isinstance(said, str) and len(member["enum"]) == 1}
        elif isinstance(member, dict) and "const" in member:
            members.append(str(member["const"]))
            kinds[str(member["const"])] = "string"
        elif (
            isinstance(required, list) and len(required) == 1 and isinstance(properties, dict) and len(properties) == 1
        ):
            [name] = required
            members.append(name)
            detail = _resolve(document, properties.get(name, {}))
            kinds[name], details[name] = "object", detail
            descriptions |= {name: said} if isinstance(said, str) else {}
            if "httpStatusCode" in (detail.get("properties") or {}):
                with_status.append(name)
        else:
            members.append(catch_all_label(member))
            catch_alls.append(member)
            notes.append(f"member {json.dumps(raw)} admits values outside the named variants")
    source = f"{CODEX_SCHEMA_FILE} definitions.{CODEX_DEFINITION}"
    return [
        Union(
            READ_UNIONS["codex"][0], "codex.variant", source, members, notes, kinds, details, catch_alls, descriptions
        ),
        Union(READ_UNIONS["codex"][1], "codex.http_status_variant", source, with_status),
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
            kinds={s: "string" for m in members for s in subtypes[m]},
        ),
        Union(
            f"{CLAUDE_ERROR_TYPE}.subtype",
            "claude-code.error_subtype",
            f"{CLAUDE_TYPES_FILE} {CLAUDE_ERROR_TYPE}",
            subtypes[CLAUDE_ERROR_TYPE],
            kinds={s: "string" for s in subtypes[CLAUDE_ERROR_TYPE]},
        ),
    ]


# ---- the shipped versions


_semver = semver  # the sort key of releases (conformance/spec/releases.py)


def package(spec: Spec, product: str) -> str:
    """The npm package of a product area."""
    known = spec.areas[product].product
    if not known:
        raise ProductError(f"spec area {product!r} names no product package")
    return str(known["package"])


def nearest(shipped: list[str], version: str) -> str:
    """The shipped version to compare with: ``version`` itself when shipped, else the newest
    shipped version not newer than it, else (older than all) the oldest shipped."""
    ordered = sorted(shipped, key=_semver)
    older = [v for v in ordered if _semver(v) <= _semver(version)]
    return older[-1] if older else ordered[0]


# ---- the comparison


def compare(spec: Spec, union: Union, catch_alls: list[str] | None = None) -> Json:
    """One union against its vocabulary in ``spec`` (the contract at one shipped version) and the
    catch-all members that version records: added (official order) and removed (spec order)."""
    expected = [str(v) for v in spec.vocabulary(union.vocabulary).values]
    if union.vocabulary in UNION_VOCABULARY.values():
        expected += catch_alls or []
    entry: Json = {
        "name": union.name,
        "vocabulary": union.vocabulary,
        "source": union.source,
        "official": union.members,
        "added": [m for m in union.members if m not in expected],
        "removed": [m for m in expected if m not in union.members],
    }
    if union.notes:
        entry["notes"] = union.notes
    return entry


def official_unions(installed: Installed) -> list[Union]:
    if installed.product == "codex":
        with tempfile.TemporaryDirectory(prefix="codex-schema-") as folder:
            return codex_unions(codex_schema(installed, Path(folder)))
    return unions_from("claude-code", installed.package_dir / CLAUDE_TYPES_FILE)


def unions_from(product: str, source: Path) -> list[Union]:
    """The official unions from a generated schema folder (Codex) or an ``sdk.d.ts`` (Claude Code)."""
    if product == "codex":
        return codex_unions(source)
    try:
        return claude_unions(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UnionError(f"cannot read {source}: {exc}") from None


def read_unions(
    spec: Spec,
    product: str,
    version: str,
    root: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
    source: Path | None = None,
) -> tuple[str, list[Union], str | None, Installed | None]:
    """``version``'s official unions, installed (cached) or read from ``source``: the exact
    version, its unions, what its binary says of itself and the installation (None from ``source``)."""
    name = package(spec, product)
    if source is None:
        version = resolve_version(name, version)
        installed, _ = install(product, name, version, root, log)
        return version, official_unions(installed), installed.product_version, installed
    if not EXACT_VERSION.match(version):
        raise ProductError(f"--from reads one version: --version must be exact (like 0.147.0), not {version!r}")
    return version, unions_from(product, source), None, None


def upgrade_check(
    spec: Spec,
    product: str,
    version: str,
    root: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
    source: Path | None = None,
) -> tuple[Json, Json | None]:
    """Read ``version``'s official unions (installed, cached; or from ``source``) and compare them
    with the nearest shipped version's. Returns the report and, for a version the spec does not
    ship, the draft entry (:mod:`conformance.products.draft`)."""
    version, unions, product_version, _ = read_unions(spec, product, version, root, log, source)
    return assess(spec, product, version, unions, product_version)


def assess(
    spec: Spec, product: str, version: str, unions: list[Union], product_version: str | None, near: str | None = None
) -> tuple[Json, Json | None]:
    """The report of ``version``'s unions against shipped ``near`` (default: :func:`nearest`) and,
    for a version the spec does not ship, its draft entry as a delta over ``near``."""
    name = package(spec, product)
    shipped = list(spec.areas[product].shipped)
    area = spec.areas[product]
    covered = area.covers(version)  # a release inside a range is that range (issue #31)
    below, above = area.neighbours(version)
    near = near or (version if covered else below or above)  # the newest covered release not newer
    assert near is not None, f"{product} covers no release"
    at = spec.at({product: near})
    compared = [compare(at, u, recorded_catch_alls(at, product)) for u in unions]
    report: Json = {
        "product": product,
        "package": name,
        "version": version,
        "shipped": covered,
        "shipped_versions": shipped,
        "nearest": near,
        "equal": not any(u["added"] or u["removed"] for u in compared),
    }
    if product_version is not None:
        report["product_version"] = product_version
    report["unions"] = compared
    if covered:
        return report, None
    draft, notes = draft_entry(at, product, name, version, unions, product_version)
    later = tuple(v for v in shipped if _semver(v) > _semver(version))
    report["decisions"] = decisions(draft, notes, tuple(compared[0]["removed"]), later)
    return report, draft
