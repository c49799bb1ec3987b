"""Benchmark: the suite side of one exec call, against a trivial adapter that answers at once.

Not a test. ``python benchmarks/exec_echo.py [--calls 2000]`` (imports ``conformance`` from
the folders on PYTHONPATH first, so benchmarks/suite.py can point it at any checkout) takes
the largest selection golden vector, has the reference compute its ``fold_output`` answer,
and starts this file as an exec adapter (``serve``) that answers every call with that
answer, read once from a file: the adapter does nothing but read a line and write one.

It times, per call (median of 5 interleaved batches):

- floor: a bare loop in this process writing the same request line to the adapter and
  blocking on its answer line (the pipes, the adapter's read and write, one JSON parse by
  orjson, the fastest there is, so that the floor is not flattered);
- exec: ``ExecAdapter.call`` — the suite's transport (framing, deadline, reader, checks);
- adapter: ``Adapter.call`` over exec — also the input's and answer's validation and copies;

and prints the suite side (exec − floor, adapter − floor) in µs. Prints JSON with --json.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson


def serve(answer_file: str) -> None:
    """The echo adapter: describe, then the fixed answer to every request, nothing else."""
    declaration, answer = json.loads(Path(answer_file).read_text(encoding="utf-8"))
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        output = declaration if request["op"] == "describe" else answer
        out.write(json.dumps({"id": request["id"], "output": output}) + "\n")
        out.flush()


def _vector() -> tuple[dict[str, Any], Any]:
    import reference_impl
    from conformance.spec import load_spec

    rows = load_spec().table("selection", "golden_vectors").rows
    vector = max(rows, key=lambda row: len(row["steps"]))
    request = {"binding": vector["binding"], "steps": vector["steps"]}
    return request, reference_impl.fold_output(copy.deepcopy(request))


def _declaration() -> dict[str, Any]:
    """The least declaration the checkout's schema takes: the chunk-events binding, nothing else."""
    from conformance.spec import load_spec

    schema = json.loads((load_spec().root / "schema" / "operations.json").read_text(encoding="utf-8"))
    required = schema["$defs"]["declaration"].get("required", [])
    fill: dict[str, Any] = {"protocol": "1", "bindings": ["chunk-events"], "providers": {}}
    return {key: fill.get(key, []) for key in required}


def _per_call(func: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - started) / calls


def measure(calls: int) -> dict[str, Any]:
    import conformance
    from conformance.harness.declaration import load_adapter
    from conformance.spec import load_spec

    request, answer = _vector()
    with tempfile.TemporaryDirectory() as tmp:
        answer_file = Path(tmp) / "answer.json"
        answer_file.write_text(json.dumps([_declaration(), answer]), encoding="utf-8")
        command = f"{sys.executable} {Path(__file__).resolve()} serve {answer_file}"
        adapter = load_adapter(f"exec:{command}", load_spec())
        process = adapter.target._adapter  # the ExecAdapter behind the Adapter
        bare = subprocess.Popen(command.split(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert bare.stdin is not None and bare.stdout is not None
        stdin, stdout = bare.stdin, bare.stdout
        line = (json.dumps({"id": 1, "op": "fold_output", "input": request}, ensure_ascii=False) + "\n").encode()

        def floor() -> None:
            stdin.write(line)
            stdin.flush()
            orjson.loads(stdout.readline())

        try:
            batches: dict[str, list[float]] = {"floor": [], "exec": [], "adapter": []}
            for _ in range(5):
                batches["floor"].append(_per_call(floor, calls))
                batches["exec"].append(_per_call(lambda: process.call("fold_output", request), calls))
                batches["adapter"].append(_per_call(lambda: adapter.call("fold_output", request), calls))
        finally:
            stdin.close()
            bare.wait()
            if adapter.close is not None:
                adapter.close()
    figures = {name: statistics.median(times) for name, times in batches.items()}
    return {
        "suite": conformance.__file__,
        "steps": len(request["steps"]),
        "line_bytes": len(line),
        "us": {name: 1e6 * value for name, value in figures.items()},
        "suite_side_us": {
            "exec": 1e6 * (figures["exec"] - figures["floor"]),
            "adapter": 1e6 * (figures["adapter"] - figures["floor"]),
        },
    }


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per batch")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = measure(args.calls)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"fold_output over exec, {figures['steps']} steps, request line {figures['line_bytes']} bytes")
    for name in ("floor", "exec", "adapter"):
        print(f"{name:<8}{figures['us'][name]:>9.1f} µs/call")
    side = figures["suite_side_us"]
    print(f"suite side: transport {side['exec']:.1f} µs, whole Adapter.call {side['adapter']:.1f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
