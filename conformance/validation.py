"""Validating operation values at native speed, explaining only the invalid ones.

Every input the suite sends and every answer an adapter gives is checked against its
definition in ``spec/schema/operations.json``. A compiled Draft 2020-12 validator
(jsonschema-rs) says whether a value is valid; only a value it rejects goes to the
pure-Python jsonschema validator, which stays the judge: its first error is the one the
failure names (:func:`conformance.spec.describe_error`), and a value it accepts passes.
So the two engines can never disagree into a false rejection, and the price of a valid
value — almost every value — is the compiled check alone.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from conformance.spec import SCHEMA_URN, describe_error, operations_schema


@cache
def _registry(schema_root: Path) -> jsonschema_rs.Registry:
    resources = []
    for file in sorted(schema_root.glob("*.json")):
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", file.name), contents))
    return jsonschema_rs.Registry(resources)


def _refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is not one of the spec's schemas; the suite never fetches a schema")


@cache
def compiled_validator(root: Path, definition: str) -> jsonschema_rs.Validator:
    """The compiled validator of one definition of spec/schema/operations.json."""
    # Formats are annotations in Draft 2020-12, as the jsonschema validator treats them.
    return jsonschema_rs.Draft202012Validator(
        {"$ref": f"{SCHEMA_URN}operations#/$defs/{definition}"},
        registry=_registry(root / "schema"),
        retriever=_refuse_retrieval,
        validate_formats=False,
    )


def first_problem(root: Path, definition: str, value: Any) -> str | None:
    """None when ``value`` fits definition ``definition`` of the operations schema of the spec at
    ``root``; otherwise its first schema error, described as one line."""
    try:
        if compiled_validator(root, definition).is_valid(value):
            return None
    except (ValueError, OverflowError, TypeError):
        pass  # a value the compiled engine cannot take in: the reference validator decides
    for error in operations_schema(root, definition).iter_errors(value):
        return describe_error(error)
    return None
