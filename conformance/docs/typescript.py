"""TypeScript types of every adapter operation, generated from spec/schema/operations.json (issue
#30, item 2): the starter's ``operations.d.ts``. Rendered with the docs (``docs/starter/``) so that
``subagent-conformance docs --check``, in CI, fails when the schema and the shipped types part.

Only the schema's shape is rendered (types, properties, required keys, enums, unions, references,
across the spec's schema files by ``$id``); constraints TypeScript cannot state (lengths, patterns,
if/then) stay the schema's, which the suite validates every value against anyway."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

OPERATIONS_ID = "urn:subagent-conformance:spec:operations"
STARTER_TYPES = "starter/operations.d.ts"  # under docs/: rendered and drift-checked with the pages
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def _schemas(schema_dir: Path) -> dict[str, dict[str, Any]]:
    """Every schema file of spec/schema by its ``$id``."""
    found = {}
    for path in sorted(schema_dir.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        if "$id" in schema:
            found[schema["$id"]] = schema
    return found


def type_name(schema_id: str, name: str) -> str:
    """``select_output_input`` of operations.json is ``SelectOutputInput``; a definition of
    another schema file carries its file's name first (``CodexRunEvent``... ``Codex`` + name)."""
    words = re.split(r"[^A-Za-z0-9]+", name)
    base = "".join(word[:1].upper() + word[1:] for word in words if word)
    if schema_id == OPERATIONS_ID:
        return base
    area = schema_id.rsplit(":", 1)[-1]
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^A-Za-z0-9]+", area) if word) + base


class _Renderer:
    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self.schemas = schemas
        self.wanted: list[tuple[str, str]] = [(OPERATIONS_ID, name) for name in schemas[OPERATIONS_ID]["$defs"]]
        self.done: set[tuple[str, str]] = set()

    def ref(self, ref: str, here: str, indent: str) -> str:
        where, _, pointer = ref.partition("#")
        schema_id = where or here
        name = pointer.removeprefix("/$defs/")
        if "/" in name:  # a pointer into a definition (…/properties/mode): its type, in place
            target: Any = self.schemas[schema_id]["$defs"]
            for part in name.split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            return self.type(target, schema_id, indent)
        if (schema_id, name) not in self.wanted:
            self.wanted.append((schema_id, name))
        return type_name(schema_id, name)

    def type(self, schema: Any, here: str, indent: str) -> str:
        if schema is True or schema == {}:
            return "unknown"
        if schema is False:
            return "never"
        if "$ref" in schema:
            return self.ref(schema["$ref"], here, indent)
        if "const" in schema:
            return json.dumps(schema["const"], ensure_ascii=False)
        if "enum" in schema:
            return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
        if "allOf" in schema:  # the members that shape a value; if/then/not constrain it (the schema's)
            shaping = [m for m in schema["allOf"] if isinstance(m, dict) and ({"$ref", "type", "properties"} & set(m))]
            return " & ".join(self._wrapped(m, here, indent) for m in shaping) or "unknown"
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return " | ".join(self._wrapped(s, here, indent) for s in schema[key])
        types = schema.get("type")
        if isinstance(types, list):
            return " | ".join(self.type({**schema, "type": t}, here, indent) for t in types)
        if types == "array" or (types is None and "items" in schema):
            return f"{self._wrapped(schema.get('items', True), here, indent)}[]"
        if types == "object" or (types is None and "properties" in schema):
            return self._object(schema, here, indent)
        return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}.get(
            str(types), "unknown"
        )

    def _wrapped(self, schema: Any, here: str, indent: str) -> str:
        text = self.type(schema, here, indent)
        return f"({text})" if " | " in text and not text.startswith("{") else text

    def _object(self, schema: dict[str, Any], here: str, indent: str) -> str:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        if not properties and schema.get("maxProperties") == 0:
            return "Record<string, never>"
        inner = indent + "  "
        lines = []
        for key, value in properties.items():
            name = key if _IDENTIFIER.match(key) else json.dumps(key)
            if isinstance(value, dict) and value.get("description"):
                lines.append(f"{inner}/** {_comment(value['description'])} */")
            lines.append(f"{inner}{name}{'' if key in required else '?'}: {self.type(value, here, inner)};")
        if extra is not False and not (extra is True and properties and schema.get("unevaluatedProperties") is False):
            rest = "unknown" if extra is True or properties else self.type(extra, here, inner)
            lines.append(f"{inner}[key: string]: {rest};")
        return "{\n" + "\n".join(lines) + f"\n{indent}}}" if lines else "Record<string, never>"

    def render(self) -> list[str]:
        out: list[str] = []
        while len(self.done) < len(self.wanted):
            schema_id, name = next(w for w in self.wanted if w not in self.done)
            self.done.add((schema_id, name))
            schema = self.schemas[schema_id]["$defs"][name]
            if isinstance(schema, dict) and schema.get("description"):
                out.append(f"/** {_comment(schema['description'])} */")
            out += [f"export type {type_name(schema_id, name)} = {self.type(schema, schema_id, '')};", ""]
        return out


def _comment(text: str) -> str:
    return " ".join(text.split()).replace("*/", "*\\/")


def render_types(schema_dir: Path) -> str:
    """The ``operations.d.ts`` of the starter: a type per definition of operations.json (and of the
    definitions it refers to elsewhere), and ``Operations``, the operation name to its function."""
    schemas = _schemas(schema_dir)
    renderer = _Renderer(schemas)
    body = renderer.render()
    operations = ["describe", *schemas[OPERATIONS_ID]["$defs"]["operation"]["enum"]]
    out = [
        "// Generated from spec/schema/operations.json by `subagent-conformance docs`: do not edit.",
        "// The JSON shape of every adapter operation's input and output (the schema states more",
        "// than types can: the suite validates every value against it).",
        "",
        *body,
        "/** Every operation an adapter may implement: its name, its input and its output. */",
        "export interface Operations {",
        *(
            f"  {op}(input: {type_name(OPERATIONS_ID, op + '_input')}): {type_name(OPERATIONS_ID, op + '_output')};"
            for op in operations
        ),
        "}",
        "",
    ]
    return "\n".join(out)
