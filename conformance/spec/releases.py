"""Which product releases a run may claim: those the spec covers, and, on release day, those
``subagent-conformance upgrade-check --write-versions FILE`` verified as equivalent to a covered
neighbour (a product-versions file, spec/schema/product-versions.json).

A verified release is tested exactly as its neighbour: the file maps a release to a covered one
and carries its evidence, never an expectation of its own, so it cannot widen what a run expects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec.model import Area, Spec
from conformance.spec.ranges import release_key
from conformance.spec.schemas import schema_validator

SCHEMA = "product-versions"
FORMAT = "subagent-conformance product-versions 1"


semver = release_key  # the one order of releases (conformance/spec/ranges.py)


def covered(area: Area, release: str) -> bool:
    """Whether the spec itself covers ``release`` (one of its ranges lists it)."""
    return area.covers(release)


def covered_neighbours(area: Area, release: str) -> tuple[str | None, str | None]:
    """The nearest covered releases below and above ``release`` (None where there is none)."""
    return area.neighbours(release)


# ---- the product-versions file


class ProductVersionsError(ValueError):
    """A product-versions file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Verified:
    """One release ``version`` of ``product`` verified as equivalent to covered ``equivalent_to``."""

    product: str
    version: str
    equivalent_to: str
    date: str
    wire_checked: bool

    @property
    def line(self) -> str:
        """How the report, the summary, JUnit and the matrix say it."""
        wire = "wire checked" if self.wire_checked else "wire not checked"
        return (
            f"{self.product} {self.version}: verified by upgrade-check on {self.date} as equivalent to "
            f"{self.equivalent_to} (unions equal; {wire})"
        )


def load_product_versions(path: Path, spec: Spec) -> dict[str, dict[str, Verified]]:
    """``{product: {release: Verified}}`` of ``path``, each entry checked against ``spec``: its
    product a product area, its neighbour a release the spec covers and the nearest covered one
    below or above it. An entry of a release the spec covers itself is left out (the spec's own
    entry decides)."""
    where = f"--product-versions={path}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProductVersionsError(f"{where}: not a readable JSON product-versions file: {exc}") from None
    for error in schema_validator(spec.root, SCHEMA).iter_errors(data):
        field = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ProductVersionsError(
            f"{where}: {field}: {error.message} (spec/schema/{SCHEMA}.json; write it with "
            "`subagent-conformance upgrade-check --write-versions FILE`)"
        )
    found: dict[str, dict[str, Verified]] = {}
    for index, entry in enumerate(data["verified"]):
        at = f"{where}: verified/{index}"
        product, version, near = entry["product"], entry["version"], entry["equivalent_to"]
        area = spec.areas.get(product)
        if area is None or not area.versions:
            raise ProductVersionsError(f"{at}/product: {product!r} is no product area of this spec")
        if covered(area, version):
            continue
        if not covered(area, near) or near not in covered_neighbours(area, version):
            below, above = covered_neighbours(area, version)
            nearest = " or ".join(v for v in (below, above) if v) or "none"
            raise ProductVersionsError(
                f"{at}/equivalent_to: {product} {version} may be equivalent only to a covered neighbour "
                f"({nearest}), not {near!r}: run `subagent-conformance upgrade-check --product {product} "
                f"--version {version} --write-versions {path}` again"
            )
        if version in found.get(product, {}):
            raise ProductVersionsError(f"{at}/version: {product} {version} is verified twice")
        found.setdefault(product, {})[version] = Verified(
            product, version, near, entry["date"], entry["wire"] == "checked"
        )
    return found


def verified_entry(
    product: str, package: str, version: str, equivalent_to: str, date: str, wire_checked: bool, evidence: Any
) -> dict[str, Any]:
    """One entry of a product-versions file, as upgrade-check writes it."""
    return {
        "product": product,
        "package": package,
        "version": version,
        "equivalent_to": equivalent_to,
        "date": date,
        "unions": "equal",
        "wire": "checked" if wire_checked else "not checked",
        "evidence": evidence,
    }


def write_product_versions(path: Path, entry: dict[str, Any]) -> None:
    """Add ``entry`` to the file at ``path`` (replacing one of the same product and release), or
    start the file with it: one file can carry the releases of several products."""
    entries: list[Any] = []
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            entries = [e for e in old.get("verified", []) if isinstance(e, dict)]
        except (OSError, ValueError, AttributeError):
            entries = []
    entries = [e for e in entries if (e.get("product"), e.get("version")) != (entry["product"], entry["version"])]
    document = {"format": FORMAT, "verified": [*entries, entry]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
