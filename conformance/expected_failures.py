"""Expected failures: an implementation's known gaps, listed so that a run can pass while
they are open, and so that each is noticed the moment it closes (strict: a pass fails)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.spec import schema_problems, schema_validator
from conformance.yamlpos import YamlError, load_located


@dataclass(frozen=True)
class Entry:
    line: int
    requirement: str | None
    test: str | None
    reason: str
    link: str | None

    def names(self, nodeid: str, requirements: list[str]) -> bool:
        if self.requirement is not None:
            return self.requirement in requirements
        assert self.test is not None
        return nodeid == self.test or nodeid.endswith("::" + self.test)

    def describe(self) -> str:
        what = f"requirement {self.requirement}" if self.requirement else f"test {self.test}"
        return what + (f" ({self.link})" if self.link else "")


def load_entries(path: Path, spec_root: Path) -> list[Entry]:
    """Read and validate the file; a bad one is a usage error naming file, line and field."""
    try:
        located = load_located(path)
    except (OSError, YamlError) as exc:
        raise pytest.UsageError(f"--expected-failures: {exc}") from None
    problems = schema_problems(located, schema_validator(spec_root, "expected-failures"), str(path))
    if problems:
        raise pytest.UsageError("--expected-failures: the file is malformed:\n  " + "\n  ".join(map(str, problems)))
    return [
        Entry(
            located.line_of(("expected_failures", i)), e.get("requirement"), e.get("test"), e["reason"], e.get("link")
        )
        for i, e in enumerate(located.data["expected_failures"])
    ]


def apply(
    entries: list[Entry], items: list[pytest.Item], known: set[str], ids_of: dict[str, list[str]], path: str
) -> None:
    """Mark the listed tests strictly expected to fail; an entry that names nothing is an error."""
    idle = []
    for entry in entries:
        if entry.requirement is not None and entry.requirement not in known:
            idle.append(f"{path}:{entry.line}: requirement {entry.requirement} is not in the spec")
            continue
        matched = [item for item in items if entry.names(item.nodeid, ids_of.get(item.nodeid, []))]
        if not matched:
            idle.append(f"{path}:{entry.line}: {entry.describe()} names no test of this run")
        for item in matched:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"expected failure: {entry.reason}"))
    if idle:
        raise pytest.UsageError("--expected-failures lists entries that name nothing:\n  " + "\n  ".join(idle))
