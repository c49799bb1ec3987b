"""Expected failures: an implementation's known gaps, listed so that a run can pass while
they are open, and so that each is noticed the moment it closes (strict: a pass fails)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import schema_problems, schema_validator
from conformance.spec.yamlpos import YamlError, load_located


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


class ExpectedFailures:
    """Judges failures against the listed gaps, by the run's one attribution: a failure is expected
    when a ``test`` entry names its test, or when every requirement it is blamed on is listed. A
    listed test that passes fails (strict); a listed requirement whose tests ran without any
    failure blamed on it is *stale* and fails the run; an entry no test of this run reaches is
    *unused* and reported, so a narrower or sharded run can share the project-wide file."""

    def __init__(self, entries: list[Entry], path: str, known: set[str]) -> None:
        strangers = [
            f"{path}:{e.line}: requirement {e.requirement} is not in the spec"
            for e in entries
            if e.requirement is not None and e.requirement not in known
        ]
        if strangers:
            raise pytest.UsageError(
                "--expected-failures names requirements the spec lacks:\n  " + "\n  ".join(strangers)
            )
        self.entries = entries
        self.path = path
        self.requirements = {e.requirement: e for e in entries if e.requirement is not None}

    def listed_test(self, nodeid: str) -> Entry | None:
        return next((e for e in self.entries if e.test is not None and e.names(nodeid, [])), None)

    def expecting(self, nodeid: str, blamed: list[str]) -> Entry | None:
        """The entry that makes this failure expected, if any."""
        entry = self.listed_test(nodeid)
        if entry is not None:
            return entry
        if blamed and all(rid in self.requirements for rid in blamed):
            return self.requirements[blamed[0]]
        return None

    def judge(self, tests: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
        """(stale, unused) entries, as lines naming the file and line, from every test's record."""
        stale, unused = [], []
        for entry in self.entries:
            where = f"{self.path}:{entry.line}: {entry.describe()}"
            if entry.test is not None:
                if not any(entry.names(t["nodeid"], []) for t in tests):
                    unused.append(f"{where} names no test of this run")
                continue
            ran = [t for t in tests if entry.requirement in t["requirements"] and t["outcome"] not in _DID_NOT_RUN]
            if not ran:
                unused.append(f"{where}: no test of this run checks it")
            elif not any(t["outcome"] == "expected-failure" and entry.requirement in t.get("blamed", ()) for t in ran):
                stale.append(f"{where}: its tests ran and no failure shows it (the gap has closed: remove the entry)")
        return stale, unused


_DID_NOT_RUN = ("skipped", "not-applicable")
