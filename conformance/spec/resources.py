"""Where the shipped data lives: inside the wheel, or beside the package in a checkout."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the conformance package: its face holds the test modules


def _data_dir(name: str) -> Path:
    # A wheel carries spec/ and fixtures/ under conformance/_data (see pyproject.toml);
    # a checkout or an editable install reads them from the repository root.
    for candidate in (PACKAGE / "_data" / name, PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"the {name}/ folder is neither at {PACKAGE / '_data' / name} (installed wheel) "
        f"nor at {PACKAGE.parent / name} (checkout): the installation is incomplete"
    )


def spec_dir() -> Path:
    """The folder holding index.yaml, the area files and schema/."""
    return _data_dir("spec")


def fixtures_dir() -> Path:
    """The folder holding fake products, scenario scripts and known-bad adapters."""
    return _data_dir("fixtures")


def shown_data_path(path: Path) -> str:
    """How a report names a file of the shipped data (``fixtures/recordings/…``), the same in a
    wheel and a checkout, never the machine's path to it; a file elsewhere (data the user pointed
    the suite at) is named as given."""
    for name in ("fixtures", "spec"):
        folder = _data_dir(name).resolve()
        if path.resolve().is_relative_to(folder):
            return f"{name}/{path.resolve().relative_to(folder).as_posix()}"
    return str(path)


def project_tests_dir() -> Path | None:
    """The project's own ``tests/``: only in a checkout, where spec/ is read beside the package."""
    root = PACKAGE.parent
    if spec_dir() != root / "spec" or not (root / "tests").is_dir():
        return None
    return root / "tests"


def installed_package() -> Path | None:
    """The package folder when the suite runs from an installed wheel (it ships its data under
    _data), None in a checkout or an editable install, where the data is the project's own."""
    return PACKAGE if (PACKAGE / "_data").is_dir() else None


def inside_installed_package(path: Path) -> bool:
    """Whether writing to ``path`` would change the installed suite itself."""
    package = installed_package()
    return package is not None and path.resolve().is_relative_to(package.resolve())


def portable_nodeid_module(path: Path) -> str | None:
    """A test module's path relative to the folder holding the package (``conformance/test_x.py``):
    how the suite's node ids name its modules wherever it is installed, so that the terminal, the
    reports and ``--expected-failures`` read the same on every machine; None outside that folder."""
    resolved = path.resolve()
    return resolved.relative_to(PACKAGE.parent).as_posix() if resolved.is_relative_to(PACKAGE.parent) else None


def nodeid_module_path(root: Path, module: str) -> Path:
    """The file a node id's module names: relative to the run's rootdir, else (a portable id of the
    installed suite, :func:`portable_nodeid_module`) to the folder holding the package."""
    here = (root / module).resolve()
    if here.exists():
        return here
    portable = (PACKAGE.parent / module).resolve()
    return portable if portable.exists() else here
