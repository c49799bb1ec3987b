"""Benchmark: what the conformance suite costs per example, against the floor of its adapter calls.

Not a test. For each checkout given (this one by default; another version of the suite, e.g.
a baseline commit in a temporary worktree, with ``--checkout base=/tmp/base``) and each
implementation (the reference in-process, and the Node.js adapter over exec), runs the main
job (``pytest --pyargs conformance``, profile ``ci``: derandomized, so every checkout draws
the same examples) in a fresh process with benchmarks/suite_probe.py loaded, and prints per
tier (test module) and, with ``--properties``, per property:

- examples per second and the split of the time into generation, oracle (the test body),
  validation, call (the rest of Adapter.call), adapter (the operation itself) and rest
  (Hypothesis' engine, pytest, fixtures);
- the floor — the same operation calls replayed without the suite — and suite time / floor;
- the CPU time of the suite's own process (robust where other load moves the wall time);
- with several checkouts, each one's suite time (wall, and CPU) against the first's;
- the suite side of one exec call with a trivial echo adapter (benchmarks/exec_echo.py).

It also measures loading the spec in a fresh process, cold (empty cache folder) and warm
(the cache the cold load left). The checkouts are run one after the other in one go, so the
figures are side by side under the same machine load.

    python benchmarks/suite.py [--checkout NAME=PATH ...] [--impl reference|node ...] [--repeat 1]
                               [--properties] [--spec-loads 5] [--json figures.json]
                               [--pytest-arg=-k=selection ...]

    git worktree add /tmp/base 70200ac     # e.g. against the turn's baseline:
    python benchmarks/suite.py --checkout base=/tmp/base --checkout this=.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
COLUMNS = ("generation", "oracle", "validation", "call", "adapter", "rest")
NODE_ADAPTER = "fixtures/adapters/node/adapter.mjs"
_NODEID = re.compile(r"test_(\w+)\.py::(\w+)")
_LOAD = (
    "import time, conformance.spec as s; t = time.perf_counter(); s.load_spec(); "
    "print(s.__file__, time.perf_counter() - t)"
)


def _env(checkout: Path, cache: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # benchmarks/older last: only a checkout without its own top-level entry point module uses it.
    env["PYTHONPATH"] = os.pathsep.join([str(checkout), str(HERE), str(HERE / "older")])
    env["XDG_CACHE_HOME"] = str(cache)
    env["SUBAGENT_CONFORMANCE_PROFILE"] = "ci"
    env.pop("CI", None)
    env.update(extra)
    return env


def spec_loads(checkout: Path, cache: Path, repeat: int) -> dict[str, float]:
    """Median seconds of load_spec() in a fresh process: cold (each time an empty cache) and warm."""

    def once(folder: Path) -> float:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD],
            cwd=cache.parent,  # not a checkout: `python -c` imports from its working folder first
            env=_env(checkout, folder),
            capture_output=True,
            text=True,
            check=True,
        )
        module, seconds = done.stdout.split()
        _check_imported(checkout, module)
        return float(seconds)

    cold = []
    for n in range(repeat):
        folder = cache.parent / f"{cache.name}-cold-{n}"
        folder.mkdir()
        cold.append(once(folder))
    once(cache)  # leave this checkout's cache warm for its suite runs
    warm = [once(cache) for _ in range(repeat)]
    return {"cold": statistics.median(cold), "warm": statistics.median(warm)}


def exec_round_trip(checkout: Path, cache: Path, calls: int) -> dict[str, Any] | None:
    """benchmarks/exec_echo.py against ``checkout``: the suite side of one exec call, or None
    where that checkout cannot run it (e.g. it has no exec adapters)."""
    done = subprocess.run(
        [sys.executable, str(HERE / "exec_echo.py"), "--json", f"--calls={calls}"],
        cwd=cache.parent,
        env=_env(checkout, cache),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(f"(exec round trip of {checkout}: {done.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return None
    figures: dict[str, Any] = json.loads(done.stdout)
    _check_imported(checkout, figures["suite"])
    return figures


def _check_imported(checkout: Path, module: str) -> None:
    if not Path(module).resolve().is_relative_to(checkout):
        sys.exit(f"asked to time {checkout}, but Python imported the suite from {module}")


def run_suite(checkout: Path, cache: Path, impl: str, work: Path, extra: list[str]) -> dict[str, Any]:
    """One main job of ``checkout`` against ``impl`` with the probe; its items and wall time."""
    out = work / "probe.json"
    argv = ["--impl=" + (f"exec:node {checkout / NODE_ADAPTER}" if impl == "node" else "reference_impl")]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "suite_probe", "-p", "no:xdist", "-p", "no:cacheprovider", "-q"]
        + ["--pyargs", "conformance", *argv, *extra],
        cwd=work,
        env=_env(checkout, cache, SUITE_PROBE_OUT=str(out)),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if not out.is_file():
        sys.exit(f"the run of {checkout} against {impl} left no figures:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    _check_imported(checkout, figures["suite"])
    figures["wall"] = wall
    figures["summary"] = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return figures


def group(items: list[dict[str, Any]], by_property: bool) -> dict[str, dict[str, float]]:
    """Sum the items' figures per tier (test module) or per property (module::function)."""
    groups: dict[str, dict[str, float]] = {}
    for item in items:
        match = _NODEID.search(item["nodeid"])
        key = (f"{match[1]}::{match[2]}" if by_property else match[1]) if match else item["nodeid"]
        row = groups.setdefault(key, {"tests": 0})
        row["tests"] += 1
        for name in ("total", "examples", "calls", "floor", *COLUMNS):
            row[name] = row.get(name, 0.0) + item[name]
        row["cpu"] = row.get("cpu", 0.0) + item.get("cpu", 0.0)
    return groups


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


def _rate(row: dict[str, float]) -> str:
    return f"{row['examples'] / row['total']:.0f}" if row["examples"] and row["total"] else "-"


def _sum(rows: dict[str, dict[str, float]]) -> dict[str, float]:
    return {c: sum(r[c] for r in rows.values()) for c in ("tests", "total", "cpu", "floor", "examples", *COLUMNS)}


def print_table(title: str, runs: dict[str, dict[str, Any]], by_property: bool, top: int | None = None) -> None:
    """One row per group and checkout, the checkouts of a group side by side; the last
    column is the group's suite time in this checkout over the first checkout's."""
    print(f"\n## {title}")
    names = list(runs)
    grouped = {name: group(run["items"], by_property) for name, run in runs.items()}
    slowest = {k: max(g[k]["total"] for g in grouped.values() if k in g) for g in grouped.values() for k in g}
    keys = sorted(slowest, key=lambda k: -slowest[k])[:top]
    head = f"{'':<46}{'checkout':<10}{'tests':>6}{'examples':>9}{'ex/s':>8}{'suite s':>9}"
    head += "".join(f"{c[:6]:>7}" for c in COLUMNS) + f"{'floor s':>9}{'/floor':>8}{'cpu s':>8}"
    print(head + (f"{'vs ' + names[0]:>10}{'cpu vs':>8}" if len(names) > 1 else ""))
    for key in [*keys, "(all)"]:
        first = _sum(grouped[names[0]]) if key == "(all)" else grouped[names[0]].get(key)
        for n, name in enumerate(names):
            row = _sum(grouped[name]) if key == "(all)" else grouped[name].get(key)
            if row is None:
                continue
            line = f"{(key if n == 0 or first is None else '')[:45]:<46}{name:<10}"
            line += f"{int(row['tests']):>6}{int(row['examples']):>9}{_rate(row):>8}{row['total']:>9.2f}"
            line += "".join(f"{100 * row[c] / row['total'] if row['total'] else 0:>6.0f}%" for c in COLUMNS)
            line += f"{row['floor']:>9.3f}{_ratio(row['total'], row['floor']):>8}{row['cpu']:>8.2f}"
            if n > 0 and first is not None:
                line += f"{_ratio(row['total'], first['total']):>10}{_ratio(row['cpu'], first['cpu']):>8}"
            print(line)
    walls = "  ".join(f"{name}: {runs[name]['wall']:.1f} s" for name in names)
    print(f"{'wall time of the run (start-up included)':<46}{walls}")


def _suite_time(run: dict[str, Any]) -> float:
    return float(sum(item["total"] for item in run["items"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--impl", action="append", choices=["reference", "node"])
    parser.add_argument("--repeat", type=int, default=1, help="runs per checkout, interleaved; the fastest counts")
    parser.add_argument("--spec-only", action="store_true", help="only the spec-load figures")
    parser.add_argument("--properties", action="store_true", help="also a table per property")
    parser.add_argument("--top", type=int, default=25, help="properties shown, slowest first")
    parser.add_argument("--spec-loads", type=int, default=5, help="fresh processes per spec-load figure")
    parser.add_argument("--exec-calls", type=int, default=1000, help="calls per batch of the exec round trip (0: skip)")
    parser.add_argument("--pytest-arg", action="append", default=[], help="passed on, e.g. -k=selection")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    checkouts = [(name, Path(path).resolve()) for name, _, path in (c.partition("=") for c in args.checkout)]
    checkouts = checkouts or [("this", HERE.parent)]
    impls = [] if args.spec_only else args.impl or ["reference", "node"]
    figures: dict[str, Any] = {"spec_load": {}, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("## spec load in a fresh process (median ms)")
        print(f"{'checkout':<12}{'cold':>8}{'warm':>8}")
        for name, path in checkouts:
            loads = spec_loads(path, root / f"cache-{name}", args.spec_loads)
            figures["spec_load"][name] = loads
            print(f"{name:<12}{1000 * loads['cold']:>8.0f}{1000 * loads['warm']:>8.0f}")
        if args.exec_calls and not args.spec_only:
            print("## one exec call with a trivial echo adapter (fold_output, µs; suite side = over the floor)")
            print(f"{'checkout':<12}{'floor':>8}{'exec':>8}{'Adapter':>9}{'suite side: exec':>18}{'Adapter':>9}")
            figures["exec_round_trip"] = {}
            for name, path in checkouts:
                trip = exec_round_trip(path, root / f"cache-{name}", args.exec_calls)
                figures["exec_round_trip"][name] = trip
                if trip is not None:
                    us, side = trip["us"], trip["suite_side_us"]
                    line = f"{name:<12}{us['floor']:>8.0f}{us['exec']:>8.0f}{us['adapter']:>9.0f}"
                    print(line + f"{side['exec']:>18.0f}{side['adapter']:>9.0f}")
        for impl in impls:
            runs: dict[str, Any] = {}
            for repeat in range(args.repeat):  # interleaved, so that drift in load touches every checkout
                for name, path in checkouts:
                    work = root / f"run-{name}-{impl}-{repeat}"
                    work.mkdir()
                    run = run_suite(path, root / f"cache-{name}", impl, work, args.pytest_arg)
                    print(f"({name} against {impl}: {run['summary']})", file=sys.stderr)
                    if name not in runs or _suite_time(run) < _suite_time(runs[name]):
                        runs[name] = run
            figures["runs"][impl] = runs
            print_table(f"{impl}: per tier", runs, by_property=False)
            if args.properties:
                print_table(f"{impl}: per property (slowest {args.top})", runs, by_property=True, top=args.top)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
