"""Where the shipped data lives: inside the wheel, or beside the package in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    # A wheel carries spec/ and fixtures/ under conformance/_data (see pyproject.toml);
    # a checkout or an editable install reads them from the repository root.
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"the {name}/ folder is neither at {_PACKAGE / '_data' / name} (installed wheel) "
        f"nor at {_PACKAGE.parent / name} (checkout): the installation is incomplete"
    )


def spec_dir() -> Path:
    """The folder holding index.yaml, the area files and schema/."""
    return _data_dir("spec")


def fixtures_dir() -> Path:
    """The folder holding fake products, scenario scripts and known-bad adapters."""
    return _data_dir("fixtures")
