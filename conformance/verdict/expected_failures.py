"""Expected failures: an implementation's known gaps, listed so that a run can pass while
they are open, and so that each is noticed the moment it closes (strict: a pass fails)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from conformance.spec import schema_problems, schema_validator
from conformance.spec.resources import PACKAGE, nodeid_module_path
from conformance.spec.yamlpos import YamlError, load_located


@dataclass(frozen=True)
class Entry:
    line: int
    requirement: str | None
    test: str | None
    reason: str
    link: str | None

    def names(self, nodeid: str, requirements: list[str], root: Path) -> bool:
        if self.requirement is not None:
            return self.requirement in requirements
        assert self.test is not None
        return names_test(self.test, nodeid, root)

    def describe(self) -> str:
        what = f"requirement {self.requirement}" if self.requirement else f"test {self.test}"
        return what + (f" ({self.link})" if self.link else "")


def names_test(written: str, nodeid: str, root: Path) -> bool:
    """Whether a ``test:`` entry names the test whose node id is ``nodeid`` (relative to ``root``,
    the run's rootdir, or absolute, as pytest shows it). An entry is ``MODULE::NAME``, MODULE the
    module's path relative to the installed package (``test_selection.py``) or to the folder
    holding it (``conformance/test_selection.py``), or as a node id shows it (an absolute path,
    this installation's or another's: what follows its package folder counts); or ``NAME`` alone,
    that test in any module. NAME with its parameters (``test_x[case]``) names one case, without
    them every case of the test: what a user copies from any run, on any machine."""
    node_modules, portable, rest = _node_forms(nodeid, str(root))
    module, sep, name = written.replace("\\", "/").partition("::")
    whole = rest.partition("[")[0]  # the test without its parameters
    if sep and module.endswith(".py"):
        path = PurePosixPath(module)
        if path.is_absolute():
            here = Path(module).resolve().as_posix() in node_modules
            moved = portable is not None and path.as_posix().endswith("/" + portable)  # another installation
            return (here or moved) and name in (rest, whole)
        return path.as_posix() in node_modules and name in (rest, whole)
    return written in (rest, whole) or rest.endswith("::" + written) or whole.endswith("::" + written)


@functools.lru_cache(maxsize=16384)
def _node_forms(nodeid: str, root: str) -> tuple[frozenset[str], str | None, str]:
    """The ways to write a node id's module, the one relative to the folder holding the package
    (None for a module outside it), and the rest of the node id; cached: every entry asks."""
    module, _, rest = nodeid.partition("::")
    path = nodeid_module_path(Path(root), module)
    portable = path.relative_to(PACKAGE.parent).as_posix() if path.is_relative_to(PACKAGE.parent) else None
    inside = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else None
    return frozenset(filter(None, (module, path.as_posix(), portable, inside))), portable, rest


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
    when a ``test`` entry names its test, or when every requirement it is blamed on is listed (a
    requirement it breaks only as a consequence, like a table's "golden vectors hold" after the
    rule that broke, is covered by that rule's entry). A
    listed test that passes fails (strict); a listed requirement whose tests ran without any
    failure blamed on it is *stale* and fails the run; an entry no test of this run reaches is
    *unused* and reported, so a narrower or sharded run can share the project-wide file."""

    def __init__(self, entries: list[Entry], path: str, known: set[str], root: Path) -> None:
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
        self.root = root  # the run's rootdir: node ids are relative to it (or absolute)
        self.requirements = {e.requirement: e for e in entries if e.requirement is not None}

    def listed_test(self, nodeid: str) -> Entry | None:
        return next((e for e in self.entries if e.test is not None and e.names(nodeid, [], self.root)), None)

    def expecting(self, nodeid: str, blamed: list[str]) -> Entry | None:
        """The entry that makes this failure expected, if any; ``blamed`` without the consequences
        of the rules it names (conformance.verdict.blame.rule_requirements)."""
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
                if not any(entry.names(t["nodeid"], [], self.root) for t in tests):
                    unused.append(f"{where} names no test of this run")
                continue
            ran = [t for t in tests if entry.requirement in t["requirements"] and t["outcome"] not in _DID_NOT_RUN]
            if not ran:
                unused.append(f"{where}: no test of this run checks it")
            elif not any(t["outcome"] == "expected-failure" and entry.requirement in t.get("blamed", ()) for t in ran):
                stale.append(f"{where}: its tests ran and no failure shows it (the gap has closed: remove the entry)")
        return stale, unused


_DID_NOT_RUN = ("skipped", "not-applicable")
