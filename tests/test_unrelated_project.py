"""A guest in the user's venv: an unrelated project's pytest run is the same with the suite
installed as with its plugin disabled (``-p no:subagent_conformance``): its own `requirement`
marker, a Hypothesis test relying on Hypothesis's default settings (200 ms deadline), its own
top-level `conformance` package, and our environment variable set to values that would change
or break our runs. Only a run that gives the suite's options is stopped, with one usage error.

Self-contained (standard library and pytest only, no import of the suite and no conftest of
this project), so that CI also runs it against the installed wheel from outside the checkout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FILES = {
    "pyproject.toml": """
[tool.pytest.ini_options]
markers = ["requirement(*ids): this project's own requirement marker"]
addopts = ["--strict-markers", "-p", "no:cacheprovider"]
""",
    "conformance/__init__.py": '"""This project\'s own package named conformance."""\n',
    "conformance/checks.py": "def answer():\n    return 42\n",
    "conformance/test_theirs.py": """
import pytest
from conformance.checks import answer


@pytest.mark.requirement("REQ-42")
def test_their_own_requirement_marker():
    assert answer() == 42
""",
    "test_properties.py": """
import datetime

import pytest
from hypothesis import given, settings, strategies as st


def test_hypothesis_defaults_are_in_force():
    assert settings.get_current_profile_name() == "default"
    assert settings().deadline == datetime.timedelta(milliseconds=200)
    assert settings().max_examples == 100


@given(st.integers())
def test_a_property(x):
    assert isinstance(x, int)


@pytest.mark.parametrize("name", ["spec", "adapter", "claim"])
def test_no_fixture_of_the_suite(request, name):
    with pytest.raises(pytest.FixtureLookupError):
        request.getfixturevalue(name)
""",
}
DISABLED = ("-p", "no:subagent_conformance")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        path = tmp_path / "project" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")
    return tmp_path / "project"


def pytest_run(project: Path, *args: str, profile: str) -> subprocess.CompletedProcess[str]:
    # Without CI: Hypothesis itself loads its own "ci" profile when CI is set, and the project's
    # test pins Hypothesis's defaults (the suite's own CI sets CI=true).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "SUBAGENT_CONFORMANCE_")) and k not in ("CI", "HYPOTHESIS_PROFILE")
    }
    env["SUBAGENT_CONFORMANCE_PROFILE"] = profile
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:randomly", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _shown(output: str) -> list[str]:
    """What a run shows, without timings and without pytest's list of installed plugins (which
    names every installed distribution, enabled or not)."""
    lines = []
    for line in output.splitlines():
        if line.startswith("plugins:"):
            continue
        lines.append(re.sub(r" in \d+\.\d+s\b.*", "", line))
    return lines


@pytest.mark.requirement("ADP-023")
@pytest.mark.parametrize("profile", ["thorough", "no-such-profile"])
def test_an_unrelated_project_runs_as_without_the_suite(project: Path, profile: str) -> None:
    with_suite = pytest_run(project, "-rA", profile=profile)
    without = pytest_run(project, "-rA", *DISABLED, profile=profile)
    assert with_suite.returncode == without.returncode == 0, with_suite.stdout + with_suite.stderr
    assert _shown(with_suite.stdout) == _shown(without.stdout)
    assert with_suite.stderr == without.stderr
    assert "6 passed" in with_suite.stdout and "subagent-conformance 0.1" not in "\n".join(_shown(with_suite.stdout))


@pytest.mark.requirement("ADP-023")
@pytest.mark.parametrize("listing", ["--markers", "--fixtures"])
def test_no_marker_or_fixture_of_the_suite_is_added(project: Path, listing: str) -> None:
    with_suite = pytest_run(project, listing, profile="default")
    without = pytest_run(project, listing, *DISABLED, profile="default")
    assert _shown(with_suite.stdout) == _shown(without.stdout)
    for ours in ("real_products", "reaches(", "The implementation under test"):
        assert ours not in with_suite.stdout


@pytest.mark.requirement("ADP-006", "ADP-023")
def test_the_suites_options_in_such_a_project_are_one_usage_error(project: Path) -> None:
    done = pytest_run(project, "--impl=my_adapter", profile="default")
    assert done.returncode == 4, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    [line] = lines
    assert line.startswith("ERROR: --impl (an option of subagent-conformance) given, but "), line
    assert f"the package `conformance` this run finds is {project.resolve() / 'conformance'}, a project's own" in line
    assert "run the suite from another folder" in line


@pytest.mark.requirement("ADP-023")
def test_our_variable_is_read_only_when_the_suite_runs(tmp_path: Path) -> None:
    """The value that left the unrelated project alone stops the suite's own run, saying why."""
    done = pytest_run(tmp_path, "--pyargs", "conformance.test_spec", profile="no-such-profile")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "SUBAGENT_CONFORMANCE_PROFILE='no-such-profile' names no Hypothesis profile of the suite" in done.stderr
