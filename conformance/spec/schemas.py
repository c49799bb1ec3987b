"""The spec's JSON Schemas (``spec/schema/``) as validators, and a document's violations as problems.

Two engines judge a value: the compiled one (jsonschema-rs) answers fast whether it is valid,
and the pure-Python one (jsonschema) explains what is wrong when it is not.
"""

from __future__ import annotations

import contextlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import referencing

from conformance.spec.model import Problem
from conformance.spec.schema_errors import SCHEMA_URN, deepest
from conformance.spec.yamlpos import Located, Path_, format_path


@cache
def _registry(schema_root: Path) -> referencing.Registry[Any]:
    resources = []
    for file in sorted(schema_root.glob("*.json")):
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", file.name), referencing.Resource.from_contents(contents)))
    return referencing.Registry().with_resources(resources)


@cache
def schema_validator(root: Path, name: str) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for ``spec/schema/<name>.json``, with every sibling schema resolvable."""
    schema_root = root / "schema"
    schema = json.loads((schema_root / f"{name}.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, registry=_registry(schema_root))


@cache
def operations_schema(root: Path, definition: str) -> jsonschema.protocols.Validator:
    """A validator for one definition of spec/schema/operations.json (an operation's input or
    output, the declaration, an exec protocol line)."""
    return schema_validator(root, "operations").evolve(schema={"$ref": f"{SCHEMA_URN}operations#/$defs/{definition}"})


@cache
def compiled_registry(schema_root: Path) -> jsonschema_rs.Registry:
    """Every schema file of ``schema_root``, for the compiled (jsonschema-rs) validators."""
    resources = []
    for file in sorted(schema_root.glob("*.json")):
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", file.name), contents))
    return jsonschema_rs.Registry(resources)


def refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is not one of the spec's schemas; the suite never fetches a schema")


@cache
def compiled_schema(root: Path, name: str) -> jsonschema_rs.Validator | None:
    """The compiled twin of :func:`schema_validator`, or None for a schema it cannot build (a
    broken copy under test): then the pure-Python validator judges alone."""
    schema_root = root / "schema"
    try:
        schema = json.loads((schema_root / f"{name}.json").read_text(encoding="utf-8"))
        # Formats are annotations in Draft 2020-12, as the jsonschema validator treats them.
        return jsonschema_rs.Draft202012Validator(
            schema, registry=compiled_registry(schema_root), retriever=refuse_retrieval, validate_formats=False
        )
    except Exception:  # any schema the compiled engine refuses is the Python validator's to explain
        return None


def schema_problems(
    located: Located,
    validator: jsonschema.protocols.Validator,
    file: str,
    compiled: jsonschema_rs.Validator | None = None,
) -> list[Problem]:
    """Every schema violation of a loaded document, each at its line and field. A document the
    compiled twin accepts has none (the Python walk costs a second per cold load); only a
    rejected one is walked by the Python validator, which names each problem."""
    if compiled is not None:
        with contextlib.suppress(ValueError, OverflowError, TypeError):
            if compiled.is_valid(located.data):
                return []
    problems: dict[str, Problem] = {}
    for error in validator.iter_errors(located.data):
        error = deepest(error)
        path: Path_ = tuple(error.absolute_path)
        field = format_path(path)
        # Several subschemas may reject the same value; its first complaint says enough.
        problems.setdefault(field, Problem(file, located.line_of(path), field, error.message))
    return list(problems.values())
