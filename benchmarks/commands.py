"""Benchmark: the two commands the README promises a time for, side by side across checkouts.

Not a test. For each checkout given (this one by default; another version of the suite, e.g.
the main at the start of a change in a temporary worktree, with ``--checkout start=/tmp/start``)
it runs, one checkout after the other and ``--repeat`` times over, alternating:

- ``test``: that checkout's own README test command (the ``pytest`` part of the block after
  ``<!-- test-command -->``; the install step is skipped), in the checkout;
- ``main``: the main job's ``python -m pytest --pyargs conformance``, from an empty folder.

Each run has the checkout first on PYTHONPATH (so an editable install of another checkout does
not leak in) and the environment otherwise unchanged, but for ``--profile`` (the suite's
Hypothesis profile, e.g. ``thorough``; default: what the environment says). A run that fails
is reported with the end of its output, and left out of the figures; the others go on. It
prints the wall time and the CPU time of the run's process tree (user + system, from the
children's rusage), the median of the repeats, and each checkout's ratio to the first one's::

    python benchmarks/commands.py --checkout start=/tmp/start --checkout this=. [--repeat 1]
                                  [--command test --command main] [--profile thorough]
                                  [--json figures.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def readme_test_command(checkout: Path) -> list[str]:
    """The pytest part of the checkout's README test command, as words."""
    text = (checkout / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- test-command -->\s*```sh\n(.*?)\n```", text, flags=re.DOTALL)
    if block is None:
        raise SystemExit(f"{checkout}/README.md has no <!-- test-command --> block")
    pytest_part = block.group(1).split("&&")[-1].strip()
    words = shlex.split(pytest_part)
    if words[:3] != ["python", "-m", "pytest"]:
        raise SystemExit(f"{checkout}: the test command does not end in `python -m pytest …`: {pytest_part}")
    return [sys.executable, *words[1:]]


def run_once(checkout: Path, command: str, profile: str | None = None) -> dict[str, float] | None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")])))
    if profile is not None:
        env["SUBAGENT_CONFORMANCE_PROFILE"] = profile
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as empty:
        if command == "test":
            argv, cwd = readme_test_command(checkout), checkout
        else:
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "conformance"]
            cwd = Path(empty)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        tail = done.stdout[-3000:] + done.stderr[-3000:]
        print(f"  {checkout.name} {command}: exit {done.returncode}, left out of the figures\n{tail}", flush=True)
        return None
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"  {checkout.name} {command}: {wall:.1f} s wall, {cpu:.1f} s CPU ({summary})", flush=True)
    return {"wall": wall, "cpu": cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--command", action="append", choices=["test", "main"], default=[])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", help="the suite's Hypothesis profile for every run (e.g. thorough)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    checkouts = [(n, Path(p).resolve()) for n, _, p in (c.partition("=") for c in args.checkout)] or [
        ("this", HERE.parent)
    ]
    commands = args.command or ["test", "main"]
    runs: dict[str, dict[str, list[dict[str, float]]]] = {n: {c: [] for c in commands} for n, _ in checkouts}
    for _ in range(args.repeat):
        for command in commands:
            for name, path in checkouts:
                if (figure := run_once(path, command, args.profile)) is not None:
                    runs[name][command].append(figure)
    figures: dict[str, Any] = {}
    print(
        "\n| command | "
        + " | ".join(f"{n} wall s (CPU s)" for n, _ in checkouts)
        + " | "
        + " | ".join(f"{n} / {checkouts[0][0]} wall (CPU)" for n, _ in checkouts[1:])
        + " |"
    )
    print("|---" * (1 + 2 * len(checkouts) - 1) + "|")
    for command in commands:
        if not all(runs[n][command] for n, _ in checkouts):
            cells = ["failed" if not runs[n][command] else "-" for n, _ in checkouts]
            print(f"| {command} | " + " | ".join(cells) + " |")
            continue
        med = {n: {k: statistics.median(r[k] for r in runs[n][command]) for k in ("wall", "cpu")} for n, _ in checkouts}
        first = med[checkouts[0][0]]
        cells = [f"{med[n]['wall']:.1f} ({med[n]['cpu']:.0f})" for n, _ in checkouts]
        ratios = [
            f"{med[n]['wall'] / first['wall']:.2f} ({med[n]['cpu'] / first['cpu']:.2f})" for n, _ in checkouts[1:]
        ]
        print(f"| {command} | " + " | ".join(cells + ratios) + " |")
        figures[command] = med
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
