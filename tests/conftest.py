"""Helpers for the project's own tests: a scratch copy of spec/ to break on purpose, and the one
way they run the suite itself — a nested, in-process pytest session (:func:`run_suite`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from hypothesis import settings

from conformance.spec.resources import spec_dir

Edit = Callable[[str, str, str], int]

PROFILE_VARIABLE = "SUBAGENT_CONFORMANCE_PROFILE"
NESTED_PROFILE = "selftest"  # what nested runs use unless $SUBAGENT_CONFORMANCE_PROFILE names another


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only a fake npm (tests/data/fake_npm.py); returns the log of its calls (one JSON
    argv per line). What it answers is set by its FAKE_NPM_* variables, per test."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    script = Path(__file__).parent / "data" / "fake_npm.py"
    npm.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n', encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_NPM_LOG", str(log))
    return log


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    target = tmp_path / "spec"
    shutil.copytree(spec_dir(), target)
    return target


@pytest.fixture
def edit(spec_copy: Path) -> Edit:
    """Replace the first match of ``pattern`` in a spec file; return the 1-based line it was on."""

    def apply(file: str, pattern: str, replacement: str) -> int:
        path = spec_copy / file
        text = path.read_text(encoding="utf-8")
        match = re.search(pattern, text, flags=re.MULTILINE)
        assert match, f"{pattern!r} not found in {file}"
        path.write_text(text[: match.start()] + replacement + text[match.end() :], encoding="utf-8")
        return text.count("\n", 0, match.start()) + 1

    return apply


# --------------------------------------------------------------------------- nested runs


@dataclass(frozen=True)
class SuiteRun:
    """What one nested run of the suite showed."""

    code: int
    out: str
    err: str
    report: dict[str, Any]  # the --conformance-report JSON when asked for (and written), else {}

    @property
    def output(self) -> str:
        """Both streams."""
        return self.out + self.err

    @property
    def tail(self) -> str:
        """The end of both streams, for an assertion's message."""
        return self.out[-6000:] + self.err[-6000:]

    def outcomes(self) -> dict[str, tuple[str, str]]:
        """Each test's outcome and message, by node id, as the report gives them."""
        return {t["nodeid"]: (t["outcome"], t.get("message", "")) for t in self.report.get("tests", [])}

    def failed(self) -> list[dict[str, Any]]:
        """The report's entries of the tests that failed."""
        return [t for t in self.report.get("tests", []) if t["outcome"] == "failed"]

    def violated(self) -> list[str]:
        """The requirements the report calls violated."""
        return [r["id"] for r in self.report.get("requirements", []) if r["status"] == "violated"]


class RunSuite(Protocol):
    def __call__(
        self,
        *args: str,
        impl: str | None = None,
        importable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        report: bool = False,
        plugins: Sequence[object] = (),
        xdist: bool = False,
    ) -> SuiteRun: ...


SUITE_TESTS = "conformance.test_"


@contextlib.contextmanager
def _isolated(cwd: Path, importable: Sequence[Path], env: Mapping[str, str]) -> Iterator[None]:
    """What a nested session may change and a fresh interpreter would not have kept: the working
    folder, environment variables (pytest itself sets and deletes PYTEST_CURRENT_TEST), sys.path
    and import hooks, the adapter modules it imported (an adapter of the same name in another test's
    folder must be imported afresh) and the Hypothesis profile in force."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    saved_path, saved_meta_path, saved_modules = list(sys.path), list(sys.meta_path), set(sys.modules)
    saved_profile = settings.get_current_profile_name()
    roots = [cwd.resolve(), *(p.resolve() for p in importable)]
    # The suite's test modules read the contract at the claimed product versions when imported
    # (conformance.plugin.contract): a nested session imports them afresh, as a new interpreter would.
    suite_tests = {name: module for name, module in sys.modules.items() if name.startswith(SUITE_TESTS)}
    for name in suite_tests:
        del sys.modules[name]
    try:
        os.chdir(cwd)
        os.environ.update(env)
        # As `python -m pytest` in cwd with PYTHONPATH=importable: both come first on sys.path.
        sys.path[:0] = [str(p) for p in roots]
        os.environ.setdefault(PROFILE_VARIABLE, NESTED_PROFILE)  # the suite reads it for each run
        yield
    finally:
        settings.load_profile(saved_profile)
        for name in set(sys.modules) - saved_modules:
            file = getattr(sys.modules[name], "__file__", None)
            if file and any(Path(file).resolve().is_relative_to(root) for root in roots):
                del sys.modules[name]
        for name in [name for name in sys.modules if name.startswith(SUITE_TESTS)]:
            del sys.modules[name]
        sys.modules.update(suite_tests)
        sys.path[:], sys.meta_path[:] = saved_path, saved_meta_path
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


@pytest.fixture
def run_suite(tmp_path: Path, pytestconfig: pytest.Config) -> RunSuite:
    """Run the suite in a nested in-process session, as ``python -m pytest ARGS`` would in the
    test's tmp_path with ``importable`` on PYTHONPATH and ``env`` set, without paying for a new
    interpreter and its imports. What it cannot share with this process is isolated (see
    :func:`_isolated`); the nested session keeps its temporary files under tmp_path and leaves the
    timeout to the outer test (pytest-timeout's SIGALRM timer is process-wide).

    No test here needs a whole pytest of its own: an exec adapter is a process of its own by
    design, and with ``xdist`` only the controller runs nested, its workers being interpreters of
    their own. ``subagent-conformance selftest`` keeps subprocesses (conformance/verdict/selftest.py
    run_suite) because it runs adapters in parallel threads, and pytest sessions cannot share a
    process at the same time."""

    def run(
        *args: str,
        impl: str | None = None,
        importable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        report: bool = False,
        plugins: Sequence[object] = (),
        xdist: bool = False,
    ) -> SuiteRun:
        run_id = uuid.uuid4().hex[:8]
        report_path = tmp_path / f"report-{run_id}.json"
        argv = [
            "-p", "no:cacheprovider", "-p", "no:randomly", *(() if xdist else ("-p", "no:xdist")),
            *(("-o", "timeout=0") if pytestconfig.pluginmanager.has_plugin("timeout") else ()),
            "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / f"basetemp-{run_id}"),
            *((f"--impl={impl}",) if impl is not None else ()),
            *((f"--conformance-report={report_path}",) if report else ()),
            *args,
        ]  # fmt: skip
        out, err = io.StringIO(), io.StringIO()
        with (
            _isolated(tmp_path, importable, env or {}),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            code = int(pytest.main(argv, list(plugins)))
        data = json.loads(report_path.read_text(encoding="utf-8")) if report and report_path.exists() else {}
        return SuiteRun(code, out.getvalue(), err.getvalue(), data)

    return run
