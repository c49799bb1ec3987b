"""The spec model: the contract in ``spec/``, loaded, checked and typed.

The package's modules, each one role: :mod:`~conformance.spec.model` (what a loaded spec is),
:mod:`~conformance.spec.loading` (loading and cross-checking the YAML files),
:mod:`~conformance.spec.schemas` (the JSON Schemas as validators),
:mod:`~conformance.spec.schema_errors` (a schema error as one line),
:mod:`~conformance.spec.cache` (the load cache), :mod:`~conformance.spec.yamlpos` (YAML with
positions). The names every layer uses are re-exported here, so that callers import them from
``conformance.spec`` and the package can be rearranged beneath them.
"""

from __future__ import annotations

from conformance.spec.cache import cache_dir, spec_digest
from conformance.spec.loading import load_spec
from conformance.spec.model import (
    Area,
    Column,
    Problem,
    ProductVersion,
    Requirement,
    Seed,
    SeedStatement,
    Spec,
    SpecError,
    Table,
    Vocabulary,
    expand_text,
    requirements_named,
)
from conformance.spec.schema_errors import SCHEMA_URN, describe_error
from conformance.spec.schemas import (
    compiled_registry,
    compiled_schema,
    operations_schema,
    refuse_retrieval,
    schema_problems,
    schema_validator,
)

__all__ = [
    "SCHEMA_URN",
    "Area",
    "Column",
    "Problem",
    "ProductVersion",
    "Requirement",
    "Seed",
    "SeedStatement",
    "Spec",
    "SpecError",
    "Table",
    "Vocabulary",
    "cache_dir",
    "compiled_registry",
    "compiled_schema",
    "describe_error",
    "expand_text",
    "load_spec",
    "operations_schema",
    "refuse_retrieval",
    "requirements_named",
    "schema_problems",
    "schema_validator",
    "spec_digest",
]
