"""A guest in the user's repository: a run of the suite writes nothing into the folder it was
started from. Hypothesis's database and caches go under the suite's cache folder
($XDG_CACHE_HOME/subagent-conformance/hypothesis), where a failing run's examples are kept for
the next; so does pytest's own cache (``.pytest_cache``, for ``--lf``), one per rootdir under
``…/subagent-conformance/pytest`` (subagent_conformance_plugin.py, ``_cache_outside``), unless the
user's ini file or ``-o`` names a ``cache_dir``. A user's own run, not asking for the suite,
keeps pytest's ``.pytest_cache`` where it always is.

A fresh interpreter, not a nested session: this process's Hypothesis has long chosen its home.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KNOWN_BAD = ROOT / "fixtures" / "known_bad"
DRAWN_BUG = "bad_late_text_displaces_message"  # streamed text after the selected message displaces it


def _run(folder: Path, cache: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_STORAGE_DIRECTORY", "PYTEST_ADDOPTS")}
    # The default profile keeps a database (a derandomized one keeps none): the case to prove.
    env |= {"XDG_CACHE_HOME": str(cache), "SUBAGENT_CONFORMANCE_PROFILE": "default", "PYTHONPATH": str(KNOWN_BAD)}
    env |= extra
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_failing_run_writes_nothing_where_it_started(tmp_path: Path) -> None:
    folder, cache = tmp_path / "repository", tmp_path / "cache"
    folder.mkdir()
    # A bug the properties find by drawing (no fixed log of theirs shows it), so that they save examples.
    result = _run(folder, cache, "--pyargs", "conformance.test_selection", f"--impl={DRAWN_BUG}")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]  # it ran, and failed
    assert sorted(p.name for p in folder.iterdir()) == []
    stored = cache / "subagent-conformance" / "hypothesis"
    assert any((stored / "examples").iterdir()), "the failing examples are kept in the suite's cache"
    [lastfailed] = (cache / "subagent-conformance" / "pytest").glob("*/v/cache/lastfailed")
    failed = json.loads(lastfailed.read_text(encoding="utf-8"))
    assert failed and all(n.startswith("conformance/test_selection.py::") for n in failed), failed
    # pytest's cache works from there: --lf runs just the failures again
    again = _run(folder, cache, "--pyargs", "conformance.test_selection", "--lf", f"--impl={DRAWN_BUG}")
    # Exactly the recorded failures run again, and each fails again: a property replays the example
    # it saved, which no other case of the same test may delete (profiles.PerTestDatabase).
    ran = re.search(r"(\d+) failed, (\d+) deselected", again.stdout)
    assert ran and int(ran[1]) == len(failed), again.stdout[-3000:]
    assert sorted(p.name for p in folder.iterdir()) == []


@pytest.mark.parametrize("how", ["-o", "ini"])
def test_the_users_cache_dir_is_kept(tmp_path: Path, how: str) -> None:
    """A ``cache_dir`` the user gives (``-o cache_dir=…`` or their ini file) is where pytest's cache goes."""
    folder, cache = tmp_path / "repository", tmp_path / "cache"
    folder.mkdir()
    args = ["--pyargs", "conformance.test_selection", "-k", "fallback and embedded"]
    if how == "ini":
        (folder / "pytest.ini").write_text("[pytest]\ncache_dir = mine\n", encoding="utf-8")
    else:
        args += ["-o", "cache_dir=mine"]
    result = _run(folder, cache, *args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (folder / "mine" / "v" / "cache" / "nodeids").is_file()
    assert not (cache / "subagent-conformance" / "pytest").exists()


def test_a_users_own_run_keeps_pytests_cache_where_it_was(tmp_path: Path) -> None:
    """Not asked for, the suite changes nothing: the user's own run writes ./.pytest_cache as ever."""
    folder, cache = tmp_path / "repository", tmp_path / "cache"
    folder.mkdir()
    (folder / "test_theirs.py").write_text("def test_theirs():\n    assert False\n", encoding="utf-8")
    result = _run(folder, cache, "test_theirs.py")
    assert result.returncode == 1 and "1 failed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    assert json.loads((folder / ".pytest_cache" / "v" / "cache" / "lastfailed").read_text(encoding="utf-8")) == {
        "test_theirs.py::test_theirs": True
    }
    assert not (cache / "subagent-conformance").exists()


def test_the_users_storage_directory_is_kept(tmp_path: Path) -> None:
    """$HYPOTHESIS_STORAGE_DIRECTORY is the user's choice: the suite's tests write there."""
    folder, cache, chosen = tmp_path / "repository", tmp_path / "cache", tmp_path / "chosen"
    folder.mkdir()
    result = _run(
        folder, cache, "--pyargs", "conformance.test_selection", "-k", "fallback",
        HYPOTHESIS_STORAGE_DIRECTORY=str(chosen),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert sorted(p.name for p in folder.iterdir()) == []
    assert chosen.is_dir() and not (cache / "subagent-conformance" / "hypothesis").exists()


def test_the_users_own_tests_in_the_same_run_keep_their_storage(tmp_path: Path) -> None:
    """Only the suite's tests move: a user's failing property in the same run keeps ./.hypothesis."""
    folder, cache = tmp_path / "repository", tmp_path / "cache"
    folder.mkdir()
    (folder / "test_theirs.py").write_text(
        "from hypothesis import given, strategies as st\n\n\n"
        "@given(st.integers())\ndef test_theirs(x):\n    assert x < 10\n",
        encoding="utf-8",
    )
    suite = ROOT / "conformance" / "test_selection.py"
    result = _run(folder, cache, "test_theirs.py", str(suite), "-k", "theirs or fallback")
    assert result.returncode == 1 and "1 failed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    assert any((folder / ".hypothesis" / "examples").iterdir()), "the user's failing example, where theirs go"
    assert (cache / "subagent-conformance" / "hypothesis").is_dir()
