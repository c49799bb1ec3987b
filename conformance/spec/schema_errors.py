"""A JSON Schema error as one line a harness author can act on.

jsonschema says of a oneOf/anyOf only "is not valid under any of the given schemas", and its
best match is often the wrong branch (``[...] is not of type 'null'`` for a list of strings).
Here an alternative names every branch it allows and what the value is instead: "expected
null, or an array of content blocks: item 0 is a string". Every other complaint also leads
with what was expected ("expected an array: the value is an object"); the value follows once,
cut to a limit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from conformance.spec.resources import spec_dir

SCHEMA_URN = "urn:subagent-conformance:spec:"
SHOWN_VALUE_MAX = 300  # the spec's exec_limits.shown_value_max, for callers without a spec at hand
_ALTERNATIVES = ("oneOf", "anyOf")
_ARTICLE_TYPES = {"array": "an array", "object": "an object", "string": "a string", "integer": "an integer"}


def elide(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters in all)"


def describe_error(error: ValidationError, limit: int = SHOWN_VALUE_MAX) -> str:
    """What was expected, where in the value, and the offending value (at most ``limit``
    characters): the expectation first, because jsonschema's own message opens with the whole
    value's repr (thousands of characters before "is not of type 'array'")."""
    error = _focus(error)
    message = _alternatives(error) if _is_alternative(error) else _expectation(error, limit)
    where = "".join(f"[{p!r}]" for p in error.absolute_path) or "(the whole value)"
    offending = elide(json.dumps(error.instance, ensure_ascii=False), limit)
    return f"{message} at {where}; offending value: {offending}"


def deepest(error: ValidationError) -> ValidationError:
    """The closest branch's own complaint, for reports that want one plain message per field."""
    while error.context:
        error = _closest(error)
    return error


def _is_alternative(error: ValidationError) -> bool:
    return error.validator in _ALTERNATIVES and bool(error.context)


def _focus(error: ValidationError) -> ValidationError:
    # Other keywords with sub-errors (allOf, if/then) are descended; an alternative is where the
    # message is built, because only there the expected shapes can be named.
    while error.context and not _is_alternative(error):
        error = best_match(error.context)
    return error


def _closest(error: ValidationError) -> ValidationError:
    """The sub-error of the branch the value came nearest to: not one whose very type is wrong,
    when a branch of the value's type exists, and then the deepest."""
    context = list(error.context or ())
    fitting = [e for e in context if not (e.validator == "type" and not e.relative_path)] or context
    deepest_length = max(len(e.relative_path) for e in fitting)
    return next(e for e in fitting if len(e.relative_path) == deepest_length)  # the first item, in order


def _alternatives(error: ValidationError) -> str:
    branches = error.validator_value if isinstance(error.validator_value, list) else []
    expected = _join([_noun(branch) for branch in branches])
    closest = _closest(error)
    where = _relative(closest.relative_path)
    if _is_alternative(closest):
        detail = f"{where}: {_alternatives(closest)}"
    elif closest.validator == "type":
        detail = f"{where} is {_kind(closest.instance)}"
    else:
        detail = f"{where}: {_expectation(closest, SHOWN_VALUE_MAX)}"
    return f"expected {expected}: {detail}"


_BOUNDS = {
    "minLength": ("a string of at least", "character"),
    "maxLength": ("a string of at most", "character"),
    "minItems": ("at least", "item"),
    "maxItems": ("at most", "item"),
    "minProperties": ("at least", "key"),
    "maxProperties": ("at most", "key"),
    "minimum": ("a number ≥", ""),
    "maximum": ("a number ≤", ""),
    "exclusiveMinimum": ("a number >", ""),
    "exclusiveMaximum": ("a number <", ""),
}


def _expectation(error: ValidationError, limit: int) -> str:
    """One keyword's complaint, leading with what it expected and never quoting the value
    (describe_error shows it once, cut)."""
    keyword, wanted = error.validator, error.validator_value
    if keyword == "type":
        kinds = wanted if isinstance(wanted, list) else [wanted]
        return f"expected {_join([_noun({'type': k}) for k in kinds])}: the value is {_kind(error.instance)}"
    if keyword == "const":
        return f"expected {elide(json.dumps(wanted, ensure_ascii=False), limit)}"
    if keyword == "enum" and isinstance(wanted, list):
        return elide("expected one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in wanted), limit)
    if keyword in _BOUNDS:
        what, unit = _BOUNDS[str(keyword)]
        unit += "s" if unit and wanted != 1 else ""
        return f"expected {what} {wanted}{' ' + unit if unit else ''}"
    if keyword == "pattern":
        return f"expected a string matching {wanted!r}"
    if keyword == "uniqueItems":
        return "expected items that all differ"
    if keyword == "contains":
        return f"expected an array holding {_noun(wanted)}"
    if keyword == "not":
        return f"expected anything but {_noun(wanted)}"
    if keyword in _ALTERNATIVES and isinstance(wanted, list):  # valid under more than one branch of a oneOf
        return f"expected exactly one of {_join([_noun(branch) for branch in wanted])}: the value fits several"
    if error.schema is False:
        return "expected nothing here (the schema allows no value)"
    message = error.message  # required, additionalProperties, ...: they name a key, not the value
    value = repr(error.instance)
    if message.startswith(value):  # any other keyword that opens with the value: named, not quoted
        message = "the value" + message[len(value) :]
    return elide(message, limit)


def _relative(path: Sequence[Any]) -> str:
    if not path:
        return "the value"
    return " ".join(f"item {p}" if isinstance(p, int) else f"key {p!r}" for p in path)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _join(nouns: list[str]) -> str:
    if len(nouns) <= 2:
        return ", or ".join(nouns)
    return ", ".join(nouns[:-1]) + ", or " + nouns[-1]


def _words(ref: str) -> str:
    return ref.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ")


def _noun(schema: Any, depth: int = 0) -> str:
    """A schema as a noun phrase: ``null``, ``an array of content blocks``, ``"aborted"``."""
    if not isinstance(schema, dict) or depth > 3:
        return "a value"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "$ref" in schema:
        target = _definition(schema["$ref"])
        if target is not None and ("type" in target or "$ref" in target or "const" in target):
            return _noun(target, depth + 1)
        words = _words(schema["$ref"])
        return f"{'an' if words[:1] in 'aeiou' else 'a'} {words}"
    kind = schema.get("type")
    if kind == "null":
        return "null"
    if kind == "array" and isinstance(schema.get("items"), dict):
        items = schema["items"]
        return f"an array of {_words(items['$ref']) + 's' if '$ref' in items else _noun(items, depth + 1)}"
    if kind == "object" and isinstance(schema.get("required"), list) and schema["required"]:
        return f"an object with {', '.join(map(str, schema['required']))}"
    if isinstance(kind, str):
        return _ARTICLE_TYPES.get(kind, f"a {kind}")
    for keyword in _ALTERNATIVES:
        if isinstance(schema.get(keyword), list):
            return _join([_noun(branch, depth + 1) for branch in schema[keyword]])
    return "a value"


def _definition(ref: str) -> dict[str, Any] | None:
    """The ``$defs`` entry a reference names, looked up in the shipped schemas (for naming only)."""
    document, _, pointer = ref.partition("#")
    name = pointer.rsplit("/", 1)[-1]
    files = [document.removeprefix(SCHEMA_URN)] if document else ["operations", "common"]
    for file in files:
        found = _definitions(file).get(name)
        if isinstance(found, dict):
            return found
    return None


@cache
def _definitions(file: str) -> dict[str, Any]:
    path = Path(spec_dir()) / "schema" / f"{file}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    defs = data.get("$defs", {})
    return defs if isinstance(defs, dict) else {}
