"""CI files that travel: the suite built into a wheel, installed in a fresh venv outside the
checkout and run from another folder, as a harness author's CI runs it. An expected-failures file
written with node ids relative to the installed package works there; every link of its summary and
matrix resolves into the contract the wheel ships; its JUnit classnames carry no machine path; and
two of its runs get two matrix columns told apart.

The venv gets the suite from the wheel alone (no file of the checkout is importable: the run's
folder and PYTHONPATH are elsewhere) and its dependencies from this interpreter's site-packages,
listed in a .pth file (so no index is needed for them; pip fetches the build backend to build the
wheel, as `pip install <checkout>` does)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

PROJECT = Path(__file__).resolve().parents[1]
IMPL = "bad_no_text_fallback"  # a known-bad adapter shipped in the wheel (its fixtures)
# Building and installing the wheel and running the tier twice counts against the first test's limit.
pytestmark = pytest.mark.timeout(600)


@dataclass(frozen=True)
class Installed:
    python: Path  # the venv's interpreter
    package: Path  # the installed conformance package, in the venv's site-packages
    work: Path  # a folder outside the checkout to run in

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SUBAGENT_CONFORMANCE_", "PYTHON"))}
        env["SUBAGENT_CONFORMANCE_PROFILE"] = "selftest"
        env["PYTHONPATH"] = str(self.package / "_data" / "fixtures" / "known_bad")  # the shipped known-bad adapters
        return subprocess.run(
            [str(self.python), *args], cwd=self.work, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly", *args)


def _checked(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("from-a-wheel")
    wheels, venv, work = root / "wheel", root / "venv", root / "elsewhere"
    work.mkdir()
    _checked(
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(PROJECT)],
            capture_output=True, text=True, timeout=300, check=False,
        )
    )  # fmt: skip
    [wheel] = wheels.glob("subagent_conformance-*.whl")
    _checked(subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True))
    python = venv / "bin" / "python"
    purelib = Path(_checked(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True
    )).stdout.strip())  # fmt: skip
    # The dependencies: this interpreter's site-packages as plain path lines (their own .pth files, such as
    # an editable install of the checkout, are not processed), after the venv's own site-packages.
    (purelib / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    _checked(
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
             str(wheel)],
            capture_output=True, text=True, timeout=300, check=False,
        )
    )  # fmt: skip
    here = Installed(python, purelib / "conformance", work)
    found = _checked(
        here.run("-c", "import conformance, subagent_conformance_plugin as p; print(conformance.__file__, p.__file__)")
    )
    assert all(Path(f).is_relative_to(purelib) for f in found.stdout.split()), found.stdout
    return here


@dataclass(frozen=True)
class Runs:
    installed: Installed
    failing: list[str]  # the node ids the first run failed, as it printed them
    listing: list[str]  # the test entries of the expected-failures file
    nothing: str  # the one entry that names no test of the run
    second: subprocess.CompletedProcess[str]
    reports: list[dict[str, Any]]

    def file(self, name: str) -> Path:
        return self.installed.work / name


@pytest.fixture(scope="module")
def runs(installed: Installed) -> Runs:
    """The selection tier's SEL-008 tests against the known-bad adapter: once as is, then with every
    failure listed in an expected-failures file written relative to the package."""
    args = ("-q", "--pyargs", "conformance.test_selection", "--requirement=SEL-008", f"--impl={IMPL}")
    first = installed.pytest(*args, "--conformance-report=first.json", "--conformance-summary=first.md")
    assert first.returncode == 1, first.stdout[-4000:] + first.stderr[-4000:]
    report = json.loads((installed.work / "first.json").read_text(encoding="utf-8"))
    failing = [t["nodeid"] for t in report["tests"] if t["outcome"] == "failed"]
    assert failing and all(n.startswith("conformance/test_selection.py::") for n in failing), failing[:3]
    assert all(f"FAILED {n}" in first.stdout for n in failing), "the node ids are those the run prints"

    def test_of(nodeid: str) -> str:
        return nodeid.split("::", 1)[1].partition("[")[0]

    outcomes = {t["nodeid"]: t["outcome"] for t in report["tests"]}
    tests = list(dict.fromkeys(map(test_of, failing)))
    # The first test whose every case failed without parameters, relative to the package; each other
    # failing case with its parameters, relative to the folder holding the package.
    whole = next(t for t in tests if all(o == "failed" for n, o in outcomes.items() if test_of(n) == t))
    listing = [f"test_selection.py::{whole}"] + [
        f"conformance/test_selection.py::{n.split('::', 1)[1]}" for n in failing if test_of(n) != whole
    ]
    assert len(listing) >= 2, "the run shows failures of more than one test"
    nothing = "test_selection.py::test_no_such_test"
    (installed.work / "gaps.yaml").write_text(
        "expected_failures:\n" + "".join(f"  - test: '{t}'\n    reason: known gap\n" for t in [*listing, nothing]),
        encoding="utf-8",
    )
    second = installed.pytest(
        *args, "--expected-failures=gaps.yaml", "--conformance-report=second.json", "--conformance-summary=second.md",
        "--junitxml=junit.xml",
    )  # fmt: skip
    _checked(
        installed.run(
            "-m", "conformance.cli", "matrix", "first.json", "second.json", "--markdown", "matrix.md",
            "--html", "matrix.html",
        )
    )  # fmt: skip
    reports = [json.loads((installed.work / f"{n}.json").read_text(encoding="utf-8")) for n in ("first", "second")]
    return Runs(installed, failing, listing, nothing, second, reports)


@pytest.mark.requirement("ADP-022")
def test_an_expected_failures_file_with_relative_ids_works_from_a_wheel(runs: Runs) -> None:
    assert runs.second.returncode == 0, runs.second.stdout[-4000:] + runs.second.stderr[-4000:]
    outcomes = {t["nodeid"]: t["outcome"] for t in runs.reports[1]["tests"]}
    assert {n for n, o in outcomes.items() if o == "expected-failure"} == set(runs.failing)
    [unused] = runs.reports[1]["run"]["unused_expected_failures"]
    assert unused.endswith(f": test {runs.nothing} names no test of this run"), unused


def _links(runs: Runs) -> list[str]:
    found = []
    for name in ("first.md", "second.md", "matrix.md"):
        found += re.findall(r"\]\(([^)\s]+)\)", runs.file(name).read_text(encoding="utf-8"))
    found += re.findall(r'href="([^"]+)"', runs.file("matrix.html").read_text(encoding="utf-8"))
    return found


def test_every_link_of_the_summary_and_matrix_resolves_into_the_shipped_contract(runs: Runs) -> None:
    """The summary and the matrix link to the contract as published at the suite's version (a page
    the wheel ships, at the same path under docs/)."""
    links = _links(runs)
    violated = [r["id"] for r in runs.reports[0]["requirements"] if r["status"] == "violated"]
    assert violated and all(any(link.endswith(f"#{rid}") for link in links) for rid in violated)
    published = f"/blob/v{runs.reports[0]['suite']['version']}/docs/"
    for link in links:
        url = urlparse(link)
        assert url.scheme == "https" and url.fragment and published in url.path, link
        target = runs.installed.package / "_data" / "docs" / url.path.partition(published)[2]
        assert target.is_file() and target.is_relative_to(runs.installed.package), f"no shipped page: {link}"
        assert f'<a id="{url.fragment}"></a>' in target.read_text(encoding="utf-8"), f"no anchor: {link}"


def test_every_link_of_the_shipped_docs_works_where_they_are_installed(installed: Installed) -> None:
    """The docs the wheel ships link into the repository (tests, modules, spec lines): each such
    link resolves inside the installed tree (a relative one), or names a file of the project in its
    published repository at the suite's version tag (the base the summary links to)."""
    contract = _checked(
        installed.run("-c", "from conformance.verdict.summary import published_contract as p; print(p())")
    ).stdout.strip()
    base = contract.removesuffix("/docs/contract.md") + "/"
    assert base != contract + "/" and base.startswith("https://"), contract
    tree, docs = installed.package.parent, installed.package / "_data" / "docs"
    problems, seen = [], {"relative": set(), "published": set()}
    for page in sorted(docs.rglob("*.md")):
        name = page.relative_to(docs).as_posix()
        text = page.read_text(encoding="utf-8")
        for href in re.findall(r"(?<!\\)\]\(([^)\s]+)\)", text) + re.findall(r'(?:href|src)="([^"]+)"', text):
            path, _, fragment = href.partition("#")
            if not path:
                continue
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", path):
                if not path.startswith(base):
                    problems.append(f"{name}: {href} is not a link into {base}")
                elif not (PROJECT / path.removeprefix(base)).exists():
                    problems.append(f"{name}: {href} names no file of the project")
                seen["published"].add(path.removeprefix(base).split("/")[0])
                continue
            target = (page.parent / unquote(path)).resolve()
            if not target.is_relative_to(tree) or not target.exists():
                problems.append(f"{name}: {href} reaches nothing in the installed tree")
            elif re.fullmatch(r"L\d+", fragment) and int(fragment[1:]) > len(target.read_text("utf-8").splitlines()):
                problems.append(f"{name}: {href} is past the end of the file")
            seen["relative"].add(target.relative_to(tree).parts[0])
    assert not problems, f"{len(problems)} broken links, the first:\n" + "\n".join(problems[:20])
    # The links the docs have: into the package's own modules, spec data and pages; and to tests/ and the README.
    assert {"conformance"} <= seen["relative"] and {"tests", "README.md"} <= seen["published"], seen


def test_junit_classnames_name_the_module_not_the_venv(runs: Runs) -> None:
    cases = list(ET.parse(runs.file("junit.xml")).getroot().iter("testcase"))
    assert cases and {case.get("classname") for case in cases} == {"conformance.test_selection"}


def test_two_runs_of_one_implementation_get_two_columns(runs: Runs) -> None:
    text = runs.file("matrix.md").read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("| requirement |"))
    first, second = [cell.strip() for cell in header.strip("|").split("|")][3:]
    assert first != second and first.startswith(IMPL) and second.startswith(IMPL), header


def test_the_agent_sdk_driver_and_its_fake_ship_in_the_wheel(installed: Installed) -> None:
    """The real tier runs Claude Code through conformance/products/sdk_driver.mjs (a file beside
    the Python modules, which the wheel must carry); tests/test_sdk_driver.py's fake SDK ships in
    the fixtures."""
    assert (installed.package / "products" / "sdk_driver.mjs").is_file()
    assert (installed.package / "_data" / "fixtures" / "fakes" / "agent_sdk" / "sdk.mjs").is_file()


def test_the_summary_and_the_report_name_nothing_of_the_machine(runs: Runs) -> None:
    """Read on another machine (a CI step summary, an uploaded report), neither names this one: no
    test id, link or path holds the venv, the folder the run started in, or the home folder."""
    places = {str(runs.installed.package.parents[3]), str(runs.installed.work), str(Path.home()), str(PROJECT)}
    for name in ("first.md", "second.md", "first.json", "second.json"):
        text = runs.file(name).read_text(encoding="utf-8")
        found = [place for place in places if place in text]
        assert not found, f"{name} names {found}"
    assert "file://" not in runs.file("first.md").read_text(encoding="utf-8")
