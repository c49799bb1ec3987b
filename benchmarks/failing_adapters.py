"""Benchmark: what a failing adapter costs the main job, against the reference's own run.

Not a test. For each checkout given (this one by default; a baseline with ``--checkout
start=/tmp/start``) it runs the main job, ``python -m pytest -q -p no:cacheprovider --pyargs
conformance`` (no ``-n``) from an empty folder, three times, one after the other:

- ``reference``: the reference implementation (the job's normal time);
- ``hang``: the reference with one pure operation (``--operation``, default select_output) that
  never returns, at the suite's own pure_call_timeout unless ``--call-timeout`` is given;
- ``raise``: the reference with the same operation raising from five frames down its own code.

Each failing adapter counts the calls that entered the operation (a line a call in a file), so
the figures say how many calls a failure cost as well as how long. A run longer than
``--limit`` seconds is killed and shown as ``> limit``. It prints wall and CPU time (of the
process tree), the calls entered, and each run's ratio to its checkout's reference run::

    python benchmarks/failing_adapters.py --checkout start=/tmp/start --checkout this=.
                                          [--operation select_output] [--call-timeout S]
                                          [--limit 1200] [--json figures.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MAIN_JOB = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "conformance"]

ADAPTERS = {
    "hang": """
import os, threading
import reference_impl
from reference_impl import *
CONFORMANCE = reference_impl.CONFORMANCE
_never = threading.Event()


def {operation}(request):
    with open(os.environ["BENCH_ENTERED"], "a") as entered:
        entered.write("entered\\n")
    _never.wait()
""",
    "raise": """
import os
import reference_impl
from reference_impl import *
CONFORMANCE = reference_impl.CONFORMANCE


def {operation}(request):
    with open(os.environ["BENCH_ENTERED"], "a") as entered:
        entered.write("entered\\n")
    return one(request)


def one(request):
    return two(request)


def two(request):
    return three(request)


def three(request):
    return four(request)


def four(request):
    raise NotImplementedError("not written yet")
""",
}


def run_once(name: str, checkout: Path, kind: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    entered = folder / f"entered-{name}-{kind}"
    entered.unlink(missing_ok=True)
    path = [str(checkout), str(folder), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)), BENCH_ENTERED=str(entered))
    argv = list(MAIN_JOB)
    if kind != "reference":
        argv.append(f"--impl=failing_{kind}")
        if args.call_timeout is not None:
            argv.append(f"--call-timeout={args.call_timeout:g}")
    with tempfile.TemporaryDirectory(prefix="bench-failing-") as empty:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, cwd=empty, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            out, _ = process.communicate(timeout=args.limit)
            killed = False
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
            killed = True
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    calls = len(entered.read_text().splitlines()) if entered.exists() else 0
    summary = "killed" if killed else (out.strip().splitlines() or [""])[-1]
    print(f"  {name} {kind}: {wall:.1f} s wall, {cpu:.1f} s CPU, {calls} call(s) entered ({summary})", flush=True)
    if kind == "reference" and process.returncode != 0:
        print(out[-3000:], flush=True)
    return {"wall": wall, "cpu": cpu, "calls": calls, "killed": killed, "exit": process.returncode}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--operation", default="select_output", help="the pure operation that fails")
    parser.add_argument("--call-timeout", type=float, help="--call-timeout for the failing runs (default: the spec's)")
    parser.add_argument("--limit", type=float, default=1200, help="seconds after which a run is killed")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    checkouts = [(n, Path(p).resolve()) for n, _, p in (c.partition("=") for c in args.checkout)] or [
        ("this", HERE.parent)
    ]
    kinds = ["reference", "hang", "raise"]
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-adapters-") as tmp:
        folder = Path(tmp)
        for kind, source in ADAPTERS.items():
            (folder / f"failing_{kind}.py").write_text(source.replace("{operation}", args.operation), encoding="utf-8")
        for kind in kinds:  # alternating checkouts, so that machine load falls on both alike
            for name, path in checkouts:
                figures.setdefault(name, {})[kind] = run_once(name, path, kind, args, folder)
    print(f"\n{args.operation} failing; main job (`--pyargs conformance`, no -n), one run each\n")
    print(
        "| checkout | "
        + " | ".join(f"{k} wall s (CPU s), calls" for k in kinds)
        + " | hang / reference | raise / reference |"
    )
    print("|---" * (1 + len(kinds) + 2) + "|")
    for name, _ in checkouts:
        runs = figures[name]
        cells = [
            f"{'> ' if r['killed'] else ''}{r['wall']:.1f} ({r['cpu']:.0f})"
            + ("" if k == "reference" else f", {r['calls']}")
            for k, r in runs.items()
        ]
        base = runs["reference"]["wall"]
        ratios = [f"{'> ' if runs[k]['killed'] else ''}{runs[k]['wall'] / base:.2f}" for k in ("hang", "raise")]
        print(f"| {name} | " + " | ".join(cells + ratios) + " |")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
