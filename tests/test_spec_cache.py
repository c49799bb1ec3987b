"""The spec loads once: a loaded spec is kept in the user's cache folder under the digest of its
files, and read back by every later process; a cache that is missing, corrupt or unwritable
only costs the full load, and an edited or broken spec is never served from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.spec import SpecError, load_spec
from tests.conftest import Edit


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "subagent-conformance"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("spec-*.pickle"))


def test_a_loaded_spec_is_read_back_for_the_folder_asking(spec_copy: Path, cache: Path, tmp_path: Path) -> None:
    first = load_spec(spec_copy)
    [entry] = _entries(cache)
    twin = tmp_path / "twin"
    shutil.copytree(spec_copy, twin)  # the same contents elsewhere: the same entry, this folder's root
    again = load_spec(twin)
    assert _entries(cache) == [entry]
    assert again.root == twin and first.root == spec_copy
    assert [r.id for r in again.requirements()] == [r.id for r in first.requirements()]
    assert again.table("selection", "golden_vectors").rows == first.table("selection", "golden_vectors").rows


def test_an_edited_spec_is_loaded_again(spec_copy: Path, cache: Path, edit: Edit) -> None:
    load_spec(spec_copy)
    edit("selection.yaml", r"(?<=title: ).*", "An edited title")
    edited = load_spec(spec_copy)
    assert edited.areas["selection"].title == "An edited title"
    assert len(_entries(cache)) == 2


def test_a_broken_spec_is_never_cached(spec_copy: Path, cache: Path, edit: Edit) -> None:
    edit("codex.yaml", r"(?<=level: )MUST", "MAY")
    for _ in range(2):  # the second load reports the same problem, not a remembered success
        with pytest.raises(SpecError, match="'MAY' is not one of"):
            load_spec(spec_copy)
    assert _entries(cache) == []


def test_a_corrupt_entry_is_replaced(spec_copy: Path, cache: Path) -> None:
    expected = [r.id for r in load_spec(spec_copy).requirements()]
    [entry] = _entries(cache)
    entry.write_bytes(b"not a pickle")
    assert [r.id for r in load_spec(spec_copy).requirements()] == expected
    assert entry.read_bytes() != b"not a pickle"
    load_spec(spec_copy)  # and the rewritten entry reads back


def test_an_unwritable_cache_only_costs_the_full_load(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a file where the cache folder would be"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert load_spec(spec_copy).areas["selection"].requirements
