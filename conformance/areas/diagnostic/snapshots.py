"""The shipped snapshots are expectations, not a cache: nothing a user passes may rewrite them,
and they must say what the spec says.

syrupy offers to rewrite a failing snapshot ("Re-run pytest with --snapshot-update"); run
against a wrong adapter that would make the wrong answer the expected one. So the options
that write snapshots or read them from elsewhere are refused whenever the suite's own tests
run, and the shipped file is compared, entry by entry, with the texts the spec renders for
the same requests (an edited file stops the run before any test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.areas.diagnostic.grammar import roots
from conformance.areas.diagnostic.oracle import (
    AGGREGATE_SEPARATOR,
    expected_fields,
    product,
    snapshot_cases,
    snapshot_requests,
)
from conformance.spec.resources import PACKAGE

SNAPSHOT_TEST = "test_snapshot_of_every_stage_and_category"
SNAPSHOT_FILE = PACKAGE / "__snapshots__" / "test_diagnostic.ambr"
FAILURE_LINE_HEAD = "Product subagent failure"  # diagnostic.yaml, table failure_line_fields

# syrupy's options (dest, flag) that write snapshots, or read expectations from another place.
REWRITING_OPTIONS = (
    ("update_snapshots", "--snapshot-update"),
    ("update_new_snapshots_only", "--snapshot-update-new-only"),
    ("snapshot_dirname", "--snapshot-dirname"),
    ("default_extension", "--snapshot-default-extension"),
    ("ignore_file_extensions", "--snapshot-ignore-file-extensions"),
)
_DEFAULTS: dict[str, Any] = {"snapshot_dirname": "__snapshots__"}


def refused_options(getoption: Any) -> str | None:
    """The usage error for syrupy options that would rewrite or replace the shipped snapshots."""
    given = [
        flag for dest, flag in REWRITING_OPTIONS if getoption(dest, None) not in (None, False, _DEFAULTS.get(dest))
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)}: the conformance suite's snapshots are the spec's expectations, shipped with it; "
        "they are never rewritten or read from elsewhere, so that no run can make an adapter's answer the "
        "expected one. A failing snapshot test is the adapter's failure (or, in this project's checkout, "
        "regenerate them from the spec and review the diff: see conformance/test_diagnostic.py)"
    )


def rendered_text(spec: Any, label: str, request: dict[str, Any]) -> str:
    """The text the spec gives a failure-only format_diagnostic request (no permission line)."""
    kind, facts = request["kind"], request["facts"]

    def line(failure: dict[str, Any]) -> str:
        fields = expected_fields(spec, label, failure)
        return f"{FAILURE_LINE_HEAD} (" + "; ".join(f"{name}: {value}" for name, value in fields) + ")"

    if kind in ("run-result", "failure-line"):
        return line({k: v for k, v in facts.items() if k != "product"})
    prefix = product(spec, label).error_prefix
    return AGGREGATE_SEPARATOR.join(prefix + line(failure) for failure in facts["failures"])


def shipped_contracts(spec: Any) -> list[Any]:
    """The contract at every shipped version of every product (each product's versions in turn,
    the others as ``spec`` has them): the shipped snapshot file holds the pairs of all of them; a
    run takes those of the versions its adapter claims, and the others' tests are not applicable
    (skipped, so that syrupy does not count their snapshots unused)."""
    at = [spec]
    for name, area in spec.areas.items():
        at += [spec.at({name: version}) for version in area.shipped if version != area.version]
    return at


def expected_snapshots(spec: Any) -> dict[str, dict[str, str]]:
    """Every snapshot entry as the spec renders it at every shipped version, by snapshot name."""
    expected: dict[str, dict[str, str]] = {}
    for contract in shipped_contracts(spec):
        for name, texts in _rendered_snapshots(contract).items():
            if expected.setdefault(name, texts) != texts:
                raise AssertionError(
                    f"{name} renders differently at two shipped versions: one snapshot cannot hold both"
                )
    return dict(sorted(expected.items()))


def _rendered_snapshots(spec: Any) -> dict[str, dict[str, str]]:
    """Every snapshot entry as the spec (at one version) renders it, by snapshot name."""
    matchers = roots(spec)
    expected = {}
    for case, label, stage, category in snapshot_cases(spec):
        texts = {}
        for name, request in snapshot_requests(spec, label, stage, category).items():
            text = rendered_text(spec, label, request)
            if not matchers[(label, request["kind"])].matches(text):
                raise AssertionError(f"the snapshot module renders {text!r}, not a sentence of its grammar")
            texts[name] = text
        expected[f"{SNAPSHOT_TEST}[{case}]"] = texts
    return expected


def snapshot_problems(spec: Any, file: Path = SNAPSHOT_FILE) -> list[str]:
    """Where the shipped snapshot file differs from the spec's rendering (empty when it does not)."""
    from syrupy.extensions.amber.serializer import AmberDataSerializer

    stored = {snapshot.name: snapshot.data for snapshot in AmberDataSerializer.read_file(str(file))}
    problems = []
    expected = expected_snapshots(spec)
    for name, texts in expected.items():
        if name not in stored:
            problems.append(f"{file}: {name}: missing")
        elif stored[name] != AmberDataSerializer.serialize(texts):
            problems.append(f"{file}: {name}: differs from the spec's rendering {texts}")
    problems += [f"{file}: {name}: a snapshot no version's test takes" for name in sorted(set(stored) - set(expected))]
    return problems


def write_snapshots(spec: Any, file: Path = SNAPSHOT_FILE) -> None:
    """Write the snapshot file from the spec (this project's checkout only: review the diff), in
    syrupy's amber format, every shipped version's pairs."""
    from syrupy.extensions.amber.serializer import AmberDataSerializer

    lines = ["# serializer version: 1"]
    for name, texts in expected_snapshots(spec).items():
        data = AmberDataSerializer.serialize(texts)
        lines += [f"# name: {name}", *("  " + line for line in data.splitlines()), "# ---"]
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def guard(config: Any, spec: Any, items: list[Any], ours: Any) -> None:
    """Refuse rewriting options, and an edited snapshot file, when the suite's tests are collected."""
    import pytest

    if not any(ours(item) for item in items):
        return
    if config.getoption("collectonly"):
        config.option.disable_unused_snapshots = True  # nothing runs: no snapshot is unused (syrupy would fail)
    if refused := refused_options(config.getoption):
        # syrupy still finishes its session after a usage error, and would then delete every
        # snapshot it saw no test take: let it neither write nor clean up.
        for dest in ("update_snapshots", "update_new_snapshots_only"):
            setattr(config.option, dest, False)
        config.option.disable_unused_snapshots = True
        raise pytest.UsageError(refused)
    taken = any(ours(item) and item.name.startswith(SNAPSHOT_TEST + "[") for item in items)
    if taken and (problems := snapshot_problems(spec)):
        raise pytest.UsageError(
            "the shipped snapshots were edited: they no longer say what the spec says "
            "(reinstall the suite):\n  " + "\n  ".join(p[:600] for p in problems[:10])
        )
