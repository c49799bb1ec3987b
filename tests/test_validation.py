"""Compiled validation (conformance.harness.validation) judges exactly as the jsonschema validator does.

The compiled engine only answers "valid"; whatever it rejects is judged again by jsonschema,
whose first error the failure names. These tests pin both halves: every definition compiles
with the spec's own ``urn:`` references resolved offline, the two engines agree on real
operation values and on broken copies of them, and where the engines differ by design the
jsonschema verdict is the one that counts.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import reference_impl
from conformance.harness.validation import check_schemas, compiled_validator, first_problem
from conformance.spec import describe_error, load_spec, operations_schema

SPEC = load_spec()
DEFINITIONS = sorted(json.loads((SPEC.root / "schema" / "operations.json").read_text(encoding="utf-8"))["$defs"])


def _corpus() -> Iterator[tuple[str, Any]]:
    """Real operation values: every selection golden vector's inputs and the reference's answers."""
    for vector in SPEC.table("selection", "golden_vectors").rows:
        request = {"binding": vector["binding"], "steps": vector["steps"]}
        yield "fold_output_input", request
        yield "fold_output_output", reference_impl.fold_output(copy.deepcopy(request))
        if all("event" in step for step in vector["steps"]) and vector["binding"] != "text-stream":
            events = {"binding": vector["binding"], "events": [step["event"] for step in vector["steps"]]}
            yield "select_output_input", events
            yield "select_output_output", reference_impl.select_output(copy.deepcopy(events))


def _broken(value: Any) -> Iterator[Any]:
    """Copies of ``value`` with one leaf or one member changed to something of another kind."""
    if isinstance(value, dict):
        for key in value:
            for replacement in _broken(value[key]):
                yield {**value, key: replacement}
            yield {k: v for k, v in value.items() if k != key}
        yield {**value, "unexpected member": True}
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            for replacement in _broken(item):
                yield [*value[:i], replacement, *value[i + 1 :]]
        yield [*value, None]
    elif isinstance(value, str):
        yield 7
    else:
        yield "seven"


CORPUS = list(_corpus())


@pytest.mark.parametrize("definition", DEFINITIONS)
def test_every_operations_definition_compiles_with_the_spec_references(definition: str) -> None:
    validator = compiled_validator(SPEC.root, definition)
    validator.is_valid(None)  # a reference left unresolved would raise here, never fetch anything


def test_the_engines_agree_on_operation_values_and_their_broken_copies() -> None:
    checked = rejected = 0
    for definition, value in CORPUS:
        assert first_problem(SPEC.root, definition, value) is None, (definition, value)
        python = operations_schema(SPEC.root, definition)
        for broken in itertools.islice(_broken(value), 3):  # a wrong kind, a missing member, a broken part
            errors = list(python.iter_errors(broken))
            assert compiled_validator(SPEC.root, definition).is_valid(broken) == (not errors), (definition, broken)
            problem = first_problem(SPEC.root, definition, broken)
            assert problem == (describe_error(errors[0]) if errors else None)
            rejected += bool(errors)
            checked += 1
    assert rejected > 100 and checked > rejected  # the corpus reaches both verdicts, and often


def test_an_invalid_answer_is_named_by_what_was_expected() -> None:
    problem = first_problem(SPEC.root, "bound_diagnostic_output", {"text": 7})
    assert problem == "expected a string: the value is an integer at ['text']; offending value: 7"


@pytest.mark.parametrize(
    ("definition", "value"),
    [
        # NaN and Infinity are numbers to jsonschema (Python's json reads them); the compiled engine refuses them
        (
            "select_output_input",
            {"binding": "chunk-events", "events": [{"type": "x", "seq": 1, "time": float("nan"), "data": {}}]},
        ),
        # Python's `$` matches before a final newline, the compiled engine's does not
        ("declaration", {"protocol": "1", "bindings": [], "providers": {"codex": "0.147.0\n"}, "process_drivers": []}),
    ],
)
def test_jsonschema_stays_the_judge_where_the_engines_differ(definition: str, value: Any) -> None:
    assert not compiled_validator(SPEC.root, definition).is_valid(value)
    assert operations_schema(SPEC.root, definition).is_valid(value)
    assert first_problem(SPEC.root, definition, value) is None


_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _schema_folder(tmp_path: Path, **extra: Any) -> Path:
    folder = tmp_path / "schema"
    folder.mkdir()
    (folder / "fine.json").write_text(json.dumps({"$schema": _DRAFT, "type": "object"}), encoding="utf-8")
    (folder / "edited.json").write_text(json.dumps({"$schema": _DRAFT, **extra}), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"type": "strin"}, "edited.json"),  # the meta-schema itself, caught by both engines
        ({"pattern": "(?<n>x)"}, "edited.json"),  # an ECMA-only pattern: Python's re rejects it
        ({"$id": "not a uri ::"}, "edited.json"),  # a URI only the compiled meta-validator checks
    ],
)
def test_check_schemas_names_the_malformed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, Any], said: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(jsonschema.SchemaError, match=said):
        check_schemas(_schema_folder(tmp_path, **extra))


def test_check_schemas_runs_the_python_check_once_per_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = _schema_folder(tmp_path, type="string")
    calls: list[Any] = []
    real = jsonschema.Draft202012Validator.check_schema

    def counted(schema: Any) -> None:
        calls.append(schema)
        real(schema)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", counted)
    check_schemas(folder)
    assert len(calls) == 2  # both files, the first time
    check_schemas(folder)
    assert len(calls) == 2  # the same contents: remembered
    (folder / "edited.json").write_text(json.dumps({"$schema": _DRAFT, "pattern": "(?<n>x)"}), encoding="utf-8")
    with pytest.raises(jsonschema.SchemaError, match=r"edited\.json"):
        check_schemas(folder)  # new contents: checked again, and the Python dialect still judged
