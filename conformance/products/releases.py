"""Which releases of a product npm has published: a version to install or record is checked
against npm's own list before a 400 MB install, and an unpublished one is refused naming the
nearest releases on either side."""

from __future__ import annotations

import json

from conformance.products.packages import EXACT_VERSION, ProductError, npm, run_command
from conformance.spec.releases import semver as semver_key  # one sort key for releases


def published_versions(package: str) -> list[str] | None:
    """Every version npm lists for ``package``, or None when npm cannot be asked (offline: the
    install that follows then fails on its own, saying so)."""
    try:
        done = run_command([npm(), "view", package, "versions", "--json"], 120)
    except ProductError:
        return None
    try:
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        listed = None
    if isinstance(listed, str):
        listed = [listed]
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else None


def check_published(package: str, version: str, published: list[str] | None) -> None:
    """Refuse a version npm does not list (when the list is known), naming the nearest releases
    on either side, so a typo or an unreleased version fails before a 400 MB install."""
    if published is None or version in published:
        return
    releases = sorted((v for v in published if EXACT_VERSION.match(v) and "-" not in v), key=semver_key)
    try:
        key = semver_key(version)
    except ValueError:
        raise ProductError(f"{version!r} is not a version npm could publish") from None
    below = [v for v in releases if semver_key(v) < key][-1:]
    above = [v for v in releases if semver_key(v) > key][:1]
    near = " and ".join(below + above) or "none"
    raise ProductError(f"npm has published no {package}@{version}; the nearest published releases: {near}")
