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

import contextlib
import hashlib
import json
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs

from conformance.spec import (
    SCHEMA_URN,
    cache_dir,
    compiled_registry,
    describe_error,
    operations_schema,
    refuse_retrieval,
)

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@cache
def compiled_validator(root: Path, definition: str) -> jsonschema_rs.Validator:
    """The compiled validator of one definition of spec/schema/operations.json."""
    # Formats are annotations in Draft 2020-12, as the jsonschema validator treats them.
    return jsonschema_rs.Draft202012Validator(
        {"$ref": f"{SCHEMA_URN}operations#/$defs/{definition}"},
        registry=compiled_registry(root / "schema"),
        retriever=refuse_retrieval,
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


def _python_check(name: str, schema: Any) -> None:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(map(str, error.absolute_path))
        raise jsonschema.SchemaError(f"{name}: {error.message} (at /{where})") from error


@cache
def _meta_validator() -> jsonschema_rs.Validator:
    # With formats: `regex` (every pattern compiles as the compiled engine reads it) and the
    # URI forms of $id/$ref/$schema, which the Python check leaves unchecked.
    return jsonschema_rs.Draft202012Validator({"$ref": DRAFT_2020_12}, validate_formats=True)


def check_schemas(schema_root: Path) -> None:
    """Raise jsonschema.SchemaError unless every schema file under ``schema_root`` is valid
    Draft 2020-12, as both engines read it.

    The compiled meta-validator checks every file each time (milliseconds). The pure-Python
    ``check_schema`` (its `regex` format is Python's ``re``, the dialect the explaining
    validator uses) costs seconds, so it runs once per content — the files and jsonschema's
    version — and a marker in the user cache remembers that these exact contents passed.
    """
    files = sorted(schema_root.glob("*.json"))
    digest = hashlib.sha256(metadata.version("jsonschema").encode() + b"\0")
    schemas = []
    for file in files:
        text = file.read_bytes()
        digest.update(file.name.encode() + b"\0" + text + b"\0")
        schema = json.loads(text)
        if schema.get("$schema") != DRAFT_2020_12:
            raise jsonschema.SchemaError(f"{file.name}: $schema is {schema.get('$schema')!r}, not {DRAFT_2020_12}")
        for error in _meta_validator().iter_errors(schema):
            _python_check(file.name, schema)  # jsonschema's explanation, where it agrees
            where = "/".join(map(str, error.instance_path))
            raise jsonschema.SchemaError(f"{file.name}: {error.message} (at /{where})")
        schemas.append((file.name, schema))
    marker = cache_dir() / f"schemas-checked-{digest.hexdigest()}"
    if marker.is_file():
        return
    for name, schema in schemas:
        _python_check(name, schema)
    with contextlib.suppress(OSError):  # an unwritable cache only means checking again next time
        marker.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=marker.parent, prefix=".schemas-", delete=False) as out:
            out.write("\n".join(name for name, _ in schemas))
        Path(out.name).replace(marker)
        markers = sorted(marker.parent.glob("schemas-checked-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in markers[16:]:  # as many as the spec cache keeps: tests check edited copies
            stale.unlink(missing_ok=True)
