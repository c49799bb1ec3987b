"""Benchmark: a managed run of a fake product against the bare cost of spawning that fake.

Not a test. For every scenario of a product as the process tier runs it (the scenario file's,
templates expanded once per row, the generated ones: conformance.process.tier.product_scenarios),
plans its runs as the tests do (plan_runs: canaries, records, the copies of a concurrent one),
times the reference driver's whole call (start, result, two dispose calls) and divides its
median by the median of spawning as many copies of the same fake with an empty script at once
and waiting for them to exit. Target: ratio <= 1.5. Scenarios whose outcome waits on a clock (a
sleep, hang, cancel or dispose timer) are listed apart with their scripted wait, and those
start() refuses before spawning anything apart again.

    python benchmarks/process_tier.py [--repeat 7] [--product codex]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reference_impl
from conformance.process.checks import refused_before_spawn
from conformance.process.scenarios import Scenario, fake_argv
from conformance.process.tier import TIERS, plan_runs, product_scenarios
from conformance.spec import Spec, load_spec


def scripted_wait_ms(scenario: Scenario) -> int:
    """How long the scenario waits on a clock by design (0 for one that only waits on the provider)."""
    waits = sum(a.get("sleep_ms", 0) for a in scenario.actions)
    if any("hang" in a for a in scenario.actions):
        waits += 1
    cancel = scenario.run.get("cancel") or {}
    waits += cancel.get("after_ms", 0) + (scenario.run.get("dispose_after_ms") or 0)
    return int(waits)


def bare_spawn(product: str, folder: Path, copies: int) -> float:
    """Spawn ``copies`` fakes with an empty script at once, each in its own session; wait for all."""
    script = folder / "empty.json"
    script.write_text(json.dumps({"record": None, "actions": []}), encoding="utf-8")
    started = time.perf_counter()
    children = [
        subprocess.Popen(fake_argv(product, script), stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(copies)
    ]
    for child in children:
        child.wait()
    return time.perf_counter() - started


def managed_call(spec: Spec, scenario: Scenario, folder: Path) -> float:
    """One call of the product's operation on the scenario's planned runs."""
    runs = [planned.run for planned in plan_runs(spec, scenario, folder)]
    operation: Callable[[dict[str, Any]], dict[str, Any]] = getattr(reference_impl, TIERS[scenario.product].operation)
    started = time.perf_counter()
    operation({"runs": runs})
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--product", choices=sorted(TIERS), action="append")
    args = parser.parse_args()
    spec = load_spec()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for product in args.product or sorted(TIERS):
            bare_spawn(product, root, 1)  # warm the interpreter's files into the page cache
            bare: dict[int, list[float]] = {}  # every bare sample, by the number of fakes spawned at once
            managed: list[tuple[Scenario, float]] = []
            for scenario in product_scenarios(spec, product):
                copies = int(scenario.run.get("concurrent", 1))
                times = []
                for k in range(args.repeat):  # interleaved, so that both see the same machine
                    bare.setdefault(copies, []).append(bare_spawn(product, root, copies))
                    times.append(managed_call(spec, scenario, root / f"{scenario.name}-{k}"))
                managed.append((scenario, statistics.median(times)))
            print(f"\n{product}:")
            for copies, samples in sorted(bare.items()):
                print(f"  bare spawn of {copies} fake(s) at once: {statistics.median(samples) * 1000:.1f} ms (median)")
            ratios: list[float] = []
            timed: list[str] = []
            refused: list[float] = []
            for scenario, median in managed:
                wait = scripted_wait_ms(scenario)
                if refused_before_spawn(spec, scenario):
                    refused.append(median)
                elif wait:
                    line = f"{scenario.name:<44} {median * 1000:7.1f} ms (scripted wait {wait} ms)"
                    timed.append(f"  timed by its script: {line}")
                else:
                    ratio = median / statistics.median(bare[int(scenario.run.get("concurrent", 1))])
                    ratios.append(ratio)
                    print(f"  {scenario.name:<52} {median * 1000:7.1f} ms  {ratio:5.2f}x")
            if ratios:
                worst = max(worst, max(ratios))
                print(
                    f"  -> {len(ratios)} scenarios that wait on no clock: median ratio "
                    f"{statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x (target <= 1.5)"
                )
            print("\n".join(timed))
            if refused:
                print(f"  refused before any spawn: {len(refused)} scenarios, each <= {max(refused) * 1000:.1f} ms")
    print(f"\nworst ratio {worst:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
