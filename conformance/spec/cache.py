"""The load cache: a spec that loaded is kept in the user cache folder under the digest of its
files and of the loader, so that every later process of a run reads it back instead of
parsing and checking it again; a missing, corrupt or unwritable cache only costs the full load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from conformance.spec.model import Spec

_MODEL_SOURCES = Path(__file__).resolve().parent  # the spec model package: every module a load runs


def spec_digest(root: Path) -> str:
    """A fingerprint of every file of a spec folder and of every module of the spec model.

    A loaded spec is the product of both: the loader, the model it builds, the schema access
    and the YAML reader all live in this package, so every ``.py`` file of it is covered (a
    module added later included) and no cache entry outlives a change to any of them.
    """
    digest = hashlib.sha256()
    for module in sorted(_MODEL_SOURCES.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_dir() -> Path:
    """The suite's folder in the user cache (XDG_CACHE_HOME or ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "subagent-conformance"


_CACHE_KEEP = 16  # loaded specs kept; tests load many edited copies, each once


def cached_spec(root: Path, digest: str) -> Spec | None:
    """The spec loaded earlier from a folder with exactly these contents, or None (absent,
    unreadable, corrupt or of another kind: every such case just loads the spec again)."""
    try:
        with (cache_dir() / f"spec-{digest}.pickle").open("rb") as file:
            spec = pickle.load(file)
    except Exception:  # an entry that cannot be read is only a missed shortcut
        return None
    if not isinstance(spec, Spec):
        return None
    return dataclasses.replace(spec, root=root)  # the same contents may sit in another folder


def remember_spec(spec: Spec, digest: str) -> None:
    """Keep a loaded spec for the other processes of a run (xdist workers, nested sessions,
    CLI commands); written whole or not at all, and never a reason to fail."""
    folder = cache_dir()
    with contextlib.suppress(OSError, pickle.PicklingError):
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=".spec-", delete=False) as file:
            pickle.dump(spec, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(file.name, folder / f"spec-{digest}.pickle")
        entries = sorted(folder.glob("spec-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in entries[_CACHE_KEEP:]:
            stale.unlink(missing_ok=True)
