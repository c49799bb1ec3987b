"""The suite proves itself: run it against the known-bad adapters in ``fixtures/known_bad``
and check that each is rejected by the requirements that should catch it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

from conformance.profiles import register_profiles
from conformance.resources import fixtures_dir

PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class KnownBad:
    module: str
    bug: str
    caught_by: tuple[str, ...]
    tiers: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """What one run of the suite against one adapter showed."""

    impl: str
    exit_code: int
    violated: tuple[str, ...]
    output: str

    @property
    def rejected(self) -> bool:
        return self.exit_code == 1 and bool(self.violated)


def known_bad_adapters() -> list[KnownBad]:
    """Every adapter listed in ``fixtures/known_bad/*.yaml`` (one file per contract area)."""
    adapters = []
    for listing in sorted((fixtures_dir() / "known_bad").glob("*.yaml")):
        for a in yaml.safe_load(listing.read_text(encoding="utf-8"))["adapters"]:
            adapters.append(KnownBad(a["module"], a["bug"], tuple(a["caught_by"]), tuple(a["tiers"])))
    return adapters


def run_suite(
    impl: str, tiers: tuple[str, ...], requirements: tuple[str, ...] = (), *, timeout: float = 600
) -> Verdict:
    """Run the conformance tiers against ``impl`` in a subprocess (only the tests of
    ``requirements``, when given); return its verdict."""
    with tempfile.TemporaryDirectory(prefix="subagent-conformance-") as scratch:
        report = Path(scratch) / "report.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(fixtures_dir() / "known_bad"), env.get("PYTHONPATH")]))
        env.setdefault("SUBAGENT_CONFORMANCE_PROFILE", "selftest")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
            f"--impl={impl}",
            f"--conformance-report={report}",
            *([f"--requirement={','.join(requirements)}"] if requirements else []),
            "--rootdir",
            scratch,
            *(str(PACKAGE / f"test_{tier}.py") for tier in tiers),
        ]
        done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout)
        violated: tuple[str, ...] = ()
        if report.exists():
            data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
            violated = tuple(r["id"] for r in data["requirements"] if r["status"] == "violated")
        return Verdict(impl, done.returncode, violated, done.stdout[-4000:] + done.stderr[-4000:])


def run_inline(impl: str, tiers: tuple[str, ...], requirements: tuple[str, ...] = ()) -> Verdict:
    """The same run as :func:`run_suite`, inside this process: a nested pytest session, which
    spares the interpreter start-up (a known-bad adapter needs only a few tests to be caught)."""
    bad = str(fixtures_dir() / "known_bad")
    if bad not in sys.path:
        sys.path.insert(0, bad)
    register_profiles()
    previous = settings.get_current_profile_name()
    settings.load_profile(os.environ.get("SUBAGENT_CONFORMANCE_PROFILE", "selftest"))
    try:
        with tempfile.TemporaryDirectory(prefix="subagent-conformance-") as scratch:
            report = Path(scratch) / "report.json"
            output = io.StringIO()
            args = [
                "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly", f"--impl={impl}",
                f"--conformance-report={report}", "--rootdir", scratch,
                *([f"--requirement={','.join(requirements)}"] if requirements else []),
                *(str(PACKAGE / f"test_{tier}.py") for tier in tiers),
            ]  # fmt: skip
            with contextlib.redirect_stdout(output):
                code = int(pytest.main(args))
            violated: tuple[str, ...] = ()
            if report.exists():
                data = json.loads(report.read_text(encoding="utf-8"))
                violated = tuple(r["id"] for r in data["requirements"] if r["status"] == "violated")
            return Verdict(impl, code, violated, output.getvalue()[-8000:])
    finally:
        settings.load_profile(previous)


def run_all(parallel: int | None = None) -> list[tuple[KnownBad | None, Verdict]]:
    """The reference (expected to pass) and every known-bad adapter (expected to be rejected)."""
    adapters = known_bad_adapters()
    tiers = tuple(sorted({t for a in adapters for t in a.tiers}))
    jobs: list[tuple[KnownBad | None, str, tuple[str, ...]]] = [(None, "reference_impl", tiers)]
    jobs += [(a, a.module, a.tiers) for a in adapters]
    with ThreadPoolExecutor(max_workers=parallel or os.cpu_count() or 2) as pool:
        # a known-bad adapter runs only the tests of the requirements that must catch it
        verdicts = list(pool.map(lambda job: run_suite(job[1], job[2], job[0].caught_by if job[0] else ()), jobs))
    return [(job[0], verdict) for job, verdict in zip(jobs, verdicts, strict=True)]
