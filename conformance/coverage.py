"""Which tests check which requirement, read from the tests' requirement markers."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from conformance.plugin import REQUIREMENT_MARKER


class _Collector:
    def __init__(self) -> None:
        self.tests: dict[str, list[str]] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            for mark in item.iter_markers(REQUIREMENT_MARKER):
                for rid in mark.args:
                    self.tests.setdefault(rid, []).append(item.nodeid)


def requirement_tests() -> dict[str, list[str]]:
    """Requirement ID -> the node IDs of the tests that name it: the conformance tests, and in
    a checkout the project's own tests too (they check the adapter protocol's requirements)."""
    collector = _Collector()
    own_tests = Path(__file__).resolve().parent.parent / "tests"
    targets = ["--pyargs", "conformance", *([str(own_tests)] if (own_tests / "test_known_bad.py").is_file() else [])]
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--snapshot-warn-unused", *targets], [collector])
    if code != pytest.ExitCode.OK:
        raise RuntimeError(f"collecting the conformance tests failed (pytest exit code {int(code)})")
    return {rid: sorted(set(names)) for rid, names in collector.tests.items()}
