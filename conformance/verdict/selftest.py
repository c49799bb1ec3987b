"""The suite proves itself: every known-bad adapter (``fixtures/known_bad``) is rejected by
exactly the requirements it breaks, and every known-good variant (``fixtures/known_good``: a
correct implementation that makes other internal choices than the reference) passes. A false
rejection is a failing self-test, just as a missed bug is."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.spec.resources import PACKAGE, fixtures_dir
from conformance.verdict import operations


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


@dataclass(frozen=True)
class KnownGood:
    module: str
    choice: str  # the legitimate internal choice it makes differently from the reference
    tiers: tuple[str, ...]


def _listings(kind: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for listing in sorted((fixtures_dir() / kind).glob("*.yaml")):
        entries += yaml.safe_load(listing.read_text(encoding="utf-8"))["adapters"]
    return entries


def known_bad_adapters() -> list[KnownBad]:
    """Every adapter listed in ``fixtures/known_bad/*.yaml`` (one file per contract area)."""
    return [KnownBad(a["module"], a["bug"], tuple(a["caught_by"]), tuple(a["tiers"])) for a in _listings("known_bad")]


def known_good_adapters() -> list[KnownGood]:
    """Every adapter listed in ``fixtures/known_good/*.yaml`` (one file per contract area), with
    the tiers it runs over: every tier whose tests call an operation it implements with another
    function than the reference's (conformance/verdict/operations.py), and the tiers its entry lists
    (``tiers``: those a changed claim reaches, such as another product version). The other tiers
    call only the reference's own functions, so they would give the reference's verdict."""
    every = frozenset().union(*operations.tiers().values())
    found = []
    for a in _listings("known_good"):
        changed = operations.changed_operations(a["module"], every, [fixtures_dir() / "known_good"])
        # `tiers` adds what a claim changes rather than a function (another product version).
        tiers = tuple(sorted({*operations.exercising(changed), *a.get("tiers", ())}))
        found.append(KnownGood(a["module"], a["choice"], tiers))
    return found


def selection(bad: KnownBad) -> list[str]:
    """The arguments that pick what a run against a known-bad adapter needs: the modules of its
    tiers, and only the tests of the requirements that must catch it (the subprocess runs of
    :func:`run_all` and the nested sessions of tests/test_known_bad.py both use them)."""
    return [f"--requirement={','.join(bad.caught_by)}", *tier_modules(bad.tiers)]


def tier_modules(tiers: tuple[str, ...]) -> list[str]:
    return [str(PACKAGE / f"test_{tier}.py") for tier in tiers]


def run_suite(impl: str, args: list[str], *, timeout: float | None = 600, profile: str | None = None) -> Verdict:
    """Run the suite against ``impl`` in a subprocess (a fresh interpreter, so that
    :func:`run_all` can run several at once), in a process group of its own; return its verdict.
    ``profile`` is the Hypothesis profile (else $SUBAGENT_CONFORMANCE_PROFILE, else selftest); a
    run still going after ``timeout`` seconds (None: no limit) is killed, group and all, and
    counts as failed, saying so."""
    with tempfile.TemporaryDirectory(prefix="subagent-conformance-") as scratch:
        report = Path(scratch) / "report.json"
        env = dict(os.environ)
        importable = [str(fixtures_dir() / "known_bad"), str(fixtures_dir() / "known_good")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [*importable, env.get("PYTHONPATH")]))
        env["SUBAGENT_CONFORMANCE_PROFILE"] = profile or env.get("SUBAGENT_CONFORMANCE_PROFILE") or "selftest"
        command = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
            f"--impl={impl}", f"--conformance-report={report}", "--rootdir", scratch, *args,
        ]  # fmt: skip
        with subprocess.Popen(
            command, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        ) as run:  # fmt: skip
            try:
                out, err = run.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(run.pid, signal.SIGKILL)
                out, err = run.communicate()
                err += f"\nselftest: the run against {impl} was still going after {timeout:g} s and was killed\n"
                return Verdict(impl, -signal.SIGKILL, (), out[-4000:] + err[-4000:])
        violated: tuple[str, ...] = ()
        if report.exists():
            data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
            violated = tuple(r["id"] for r in data["requirements"] if r["status"] == "violated")
        return Verdict(impl, run.returncode, violated, out[-4000:] + err[-4000:])


Subject = KnownBad | KnownGood | None  # None: the reference


# The profile of a run under an explicit seed: one that is not derandomized (a derandomized
# profile, as ci and selftest are, ignores --hypothesis-seed), with ci's example budget.
SEEDED_PROFILE = "default"


def run_all(
    parallel: int | None = None,
    *,
    only: str | None = None,
    profile: str | None = None,
    timeout: float | None = 600,
    adapters: tuple[str, ...] = (),
    seeds: tuple[int, ...] = (),
) -> list[tuple[Subject, Verdict]]:
    """The reference and every known-good variant (each expected to pass its tiers whole), and
    every known-bad adapter over the whole of its tiers, so that its violated set can be compared
    with ``caught_by`` exactly (tests/test_known_bad.py checks the same on the caught_by tests only).
    ``only="good"`` or ``"bad"`` keeps the reference (over the tiers of the kept adapters) and one
    kind; ``profile`` and ``timeout`` go to every run (:func:`run_suite`).

    ``adapters`` names known-bad or known-good entries to run alone (no reference), each under
    ``profile`` and then once under each of ``seeds`` (profile SEEDED_PROFILE, random but
    reproducible): a verdict that must hold every run is checked under other draws than the
    derandomized ones (issue #28). The seeded verdicts' ``impl`` says "MODULE (seed N)"."""
    bad = known_bad_adapters() if only != "good" else []
    good = known_good_adapters() if only != "bad" else []
    subjects: list[KnownBad | KnownGood] = [*good, *bad]
    jobs: list[tuple[Subject, str, list[str], str | None]] = []
    if adapters:
        entries: dict[str, KnownBad | KnownGood] = {a.module: a for a in subjects}
        for name in adapters:
            entry = entries[name]
            jobs.append((entry, name, tier_modules(entry.tiers), profile))
            for seed in seeds:
                args = [*tier_modules(entry.tiers), f"--hypothesis-seed={seed}"]
                jobs.append((entry, f"{name} (seed {seed})", args, SEEDED_PROFILE))
    else:
        tiers = tuple(sorted({t for a in bad for t in a.tiers} | {t for g in good for t in g.tiers}))
        jobs = [(None, "reference_impl", tier_modules(tiers), profile)]
        jobs += [(a, a.module, tier_modules(a.tiers), profile) for a in subjects]
    with ThreadPoolExecutor(max_workers=parallel or os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda job: _run(job[1], job[2], timeout, job[3]), jobs))
    return [(job[0], verdict) for job, verdict in zip(jobs, verdicts, strict=True)]


def known_entries() -> set[str]:
    """The module names of every known-bad and known-good entry."""
    return {a.module for a in known_bad_adapters()} | {g.module for g in known_good_adapters()}


def _run(label: str, args: list[str], timeout: float | None, profile: str | None) -> Verdict:
    """One run of ``label`` ("MODULE" or "MODULE (seed N)"), the verdict named by the label."""
    verdict = run_suite(label.split(" ", 1)[0], args, timeout=timeout, profile=profile)
    return dataclasses.replace(verdict, impl=label)
