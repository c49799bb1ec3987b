"""Helpers for the project's own tests: a scratch copy of spec/ to break on purpose."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.resources import spec_dir

Edit = Callable[[str, str, str], int]


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    target = tmp_path / "spec"
    shutil.copytree(spec_dir(), target)
    return target


@pytest.fixture
def edit(spec_copy: Path) -> Edit:
    """Replace the first match of ``pattern`` in a spec file; return the 1-based line it was on."""

    def apply(file: str, pattern: str, replacement: str) -> int:
        path = spec_copy / file
        text = path.read_text(encoding="utf-8")
        match = re.search(pattern, text, flags=re.MULTILINE)
        assert match, f"{pattern!r} not found in {file}"
        path.write_text(text[: match.start()] + replacement + text[match.end() :], encoding="utf-8")
        return text.count("\n", 0, match.start()) + 1

    return apply
