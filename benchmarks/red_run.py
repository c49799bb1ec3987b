"""Benchmark: what a red run costs against a green one, over the exec pipe (issue #30, item 5).

Not a test. It runs the selection and results tiers, ``python -m pytest -q -p no:cacheprovider
-p no:xdist --pyargs conformance.test_selection conformance.test_results``, from an empty folder,
against two exec adapters side by side, alternating, ``--rounds`` times each:

- ``green``: the Node.js example (fixtures/adapters/node/adapter.mjs), which conforms;
- ``red``: a copy of it with no streamed-text fallback (the bug of the known-bad
  bad_no_text_fallback, SEL-008), so that several properties fail and Hypothesis shrinks each
  failing example over the pipe.

It prints each run's wall and CPU time (of the process tree), its exit status, and the red/green
ratio of the medians::

    python benchmarks/red_run.py [--rounds 3] [--profile ci] [--json figures.json]

The suite's bound on shrinking over exec lives in conformance/harness/profiles.py; recorded
figures: docs/measurements/2026-12-02/red-run.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NODE_ADAPTER = ROOT / "fixtures" / "adapters" / "node" / "adapter.mjs"
TIERS = ["conformance.test_selection", "conformance.test_results"]
# The one line that gives the fold its streamed-text fallback, and what the red copy answers instead.
FALLBACK = 'return this.#streamed.length > 0 ? [{ type: "text", text: this.#streamed }] : null;'
NO_FALLBACK = "return null; // red: no streamed-text fallback (SEL-008)"


def red_adapter(folder: Path) -> Path:
    text = NODE_ADAPTER.read_text(encoding="utf-8")
    assert text.count(FALLBACK) == 1, "the Node.js adapter's fallback line moved: update red_run.py"
    path = folder / "red-adapter.mjs"
    path.write_text(text.replace(FALLBACK, NO_FALLBACK), encoding="utf-8")
    return path


def run(adapter: Path, work: Path, profile: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SUBAGENT_CONFORMANCE_"))}
    env["SUBAGENT_CONFORMANCE_PROFILE"] = profile
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--pyargs", *TIERS]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*command, f"--impl=exec:node {adapter}"], cwd=work, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return {"wall": round(wall, 1), "cpu": round(cpu, 1), "exit": done.returncode, "last": last}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default="ci", help="the suite's Hypothesis profile (default: ci, as on CI)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        adapters = {"green": NODE_ADAPTER, "red": red_adapter(folder)}
        work = folder / "work"
        work.mkdir()
        runs: dict[str, list[dict[str, Any]]] = {"green": [], "red": []}
        for round_ in range(args.rounds):
            for name, adapter in adapters.items():
                figures = run(adapter, work, args.profile)
                runs[name].append(figures)
                print(f"round {round_ + 1} {name:5}: {figures['wall']:7.1f} s wall, {figures['cpu']:7.1f} s CPU, "
                      f"exit {figures['exit']}: {figures['last']}", flush=True)  # fmt: skip
    assert all(r["exit"] == 0 for r in runs["green"]) and all(r["exit"] == 1 for r in runs["red"]), runs
    medians = {name: statistics.median(r["wall"] for r in found) for name, found in runs.items()}
    cpu = {name: statistics.median(r["cpu"] for r in found) for name, found in runs.items()}
    ratio, cpu_ratio = medians["red"] / medians["green"], cpu["red"] / cpu["green"]
    print(f"median wall: green {medians['green']:.1f} s, red {medians['red']:.1f} s; red/green {ratio:.2f} "
          f"(CPU {cpu_ratio:.2f})")  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": runs, "ratio": ratio, "cpu_ratio": cpu_ratio}, indent=2) + "\n")


if __name__ == "__main__":
    main()
