"""What ran in the real-products tier, for the report's provenance: each product's npm package
and version, what its binary says of itself, the SDK and Node.js versions, and the binary itself
(its path inside the products cache and its sha256), so a verdict names the exact bytes it was
reached against, not only the version the adapter claimed.

Each real-tier test attaches the provenance of the product it ran to its report
(``PROPERTY``, a JSON object: xdist carries a test's user properties to the controller), and the
session gathers them into ``run.products`` (spec/schema/report.json).
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.products.packages import Installed, ProductError, cache_root, product_version, run_command
from conformance.spec import Spec
from conformance.spec.releases import Verified

PROPERTY = "real_product"  # a test's user property: the provenance of the product it ran


def release_to_run(spec: Spec, name: str, verified: Iterable[Verified]) -> tuple[str, str]:
    """The npm package and release of ``name`` the real tier installs and runs: the claimed release
    itself when upgrade-check verified it as equivalent to the covered one ``spec`` stands at (it is
    tested under that one's contract, but what runs, and what provenance names, is the claimed
    release), else that covered release."""
    package, covered = product_version(spec, name)
    claimed = [v.version for v in verified if v.product == name and v.equivalent_to == covered]
    return package, claimed[0] if claimed else covered


@functools.lru_cache(maxsize=32)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The file's sha256 (keyed by size and mtime too, so a replaced binary is hashed again)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=1)
def node_version() -> str | None:
    """``node --version`` of the Node.js on PATH (the one npm installed with, and the one the
    Agent SDK's JavaScript runs under), or None without one."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        done = run_command([node, "--version"], 30)
    except ProductError:
        return None
    version = done.stdout.strip() if done.returncode == 0 else ""
    return version or None


def _manifest(installed: Installed) -> dict[str, Any]:
    try:
        data = json.loads((installed.package_dir / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _relative(path: Path, root: Path) -> str:
    """``path`` inside the products cache, or as it is when it lies elsewhere."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def provenance(installed: Installed, root: Path | None = None) -> dict[str, Any]:
    """One product that ran (spec/schema/report.json#/$defs/real_product)."""
    manifest = _manifest(installed)
    entry: dict[str, Any] = {
        "product": installed.product,
        "package": f"{installed.package}@{manifest.get('version', installed.version)}",
        "product_version": installed.product_version,
        "binary": _relative(installed.binary, cache_root(root)),
        "sha256": sha256(installed.binary),
        "node": node_version(),
    }
    if installed.product == "claude-code":
        # The Agent SDK is the package itself; it names the Claude Code it bundles.
        entry["sdk"] = f"{installed.package}@{manifest.get('version', installed.version)}"
        if isinstance(manifest.get("claudeCodeVersion"), str):
            entry["claude_code_version"] = manifest["claudeCodeVersion"]
    return entry


def gathered(entries: list[str]) -> list[dict[str, Any]]:
    """The distinct products of the tests' ``PROPERTY`` values, in a stable order."""
    unique = {value: json.loads(value) for value in entries}
    return sorted(unique.values(), key=lambda e: (e["product"], e["package"], e["sha256"]))
