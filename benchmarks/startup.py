"""Benchmark: what the installed suite costs a pytest run that does not ask for it.

Not a test. Times ``python -m pytest`` of a small unrelated project (its own tests, a
Hypothesis property, its own top-level ``conformance`` package) with the plugin installed,
against the same run with it disabled (``-p no:subagent_conformance``): the runs alternate, so
both see the same machine, and the medians are compared. Target: ratio <= 1.05. For scale it
also times the suite's own start-up on one of its modules (``--pyargs conformance.test_spec``).

    python benchmarks/startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = {
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["-p", "no:cacheprovider"]\n',
    "conformance/__init__.py": "",
    "conformance/test_theirs.py": "def test_theirs():\n    assert True\n",
    "test_properties.py": (
        "from hypothesis import given, strategies as st\n\n\n"
        "@given(st.integers())\ndef test_a_property(x):\n    assert isinstance(x, int)\n\n\n"
        + "".join(f"def test_plain_{i}():\n    assert {i} == {i}\n\n\n" for i in range(20))
    ),
}


def run(args: list[str], cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *args], cwd=cwd, env=env, capture_output=True
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout.decode()}{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-") as folder:
        project = Path(folder)
        for name, text in PROJECT.items():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text(text, encoding="utf-8")
        cases = {"installed": [], "disabled": ["-p", "no:subagent_conformance"]}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for args in cases.values():
            run(args, project)  # warm the file system and the bytecode caches
        for _ in range(options.repeat):
            for name, args in cases.items():
                times[name].append(run(args, project))
        suite = [run(["--pyargs", "conformance.test_spec"], project.parent) for _ in range(3)]
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"unrelated project, {options.repeat} alternating runs each (median wall time):")
    for name, value in medians.items():
        spread = f"{min(times[name]):.0f}-{max(times[name]):.0f}"
        print(f"  {name:<10} {value:7.0f} ms   (range {spread} ms)")
    print(f"  ratio installed / disabled: {medians['installed'] / medians['disabled']:.3f}   (target <= 1.05)")
    print(f"for scale, the suite's own start-up (--pyargs conformance.test_spec): {statistics.median(suite):.0f} ms")


if __name__ == "__main__":
    main()
