"""The ``subagent-conformance`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance.spec import Spec, SpecError, load_spec


def _load(args: argparse.Namespace) -> Spec | None:
    """The spec, or None after printing every problem it has."""
    try:
        return load_spec(args.spec)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return None


def _check_spec(args: argparse.Namespace) -> int:
    spec = _load(args)
    if spec is None:
        return 1
    count = sum(1 for _ in spec.requirements())
    print(f"spec {spec.version}: {len(spec.areas)} areas, {count} requirements, no problems")
    return 0


def _docs(args: argparse.Namespace) -> int:
    from conformance.docs import render_contract

    spec = _load(args)
    if spec is None:
        return 1
    text = render_contract(spec)
    target: Path = args.output
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            print(
                f"{target} is out of date with spec/: run `subagent-conformance docs` and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"{target} matches spec/")
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


def _coverage(args: argparse.Namespace) -> int:
    from conformance.coverage import requirement_tests

    spec = _load(args)
    if spec is None:
        return 1
    tests = requirement_tests()
    untested = 0
    for req in spec.requirements():
        names = tests.get(req.id, [])
        if req.excluded:
            print(f"{req.id}  excluded: {' '.join(req.excluded.split())[:100]}")
        elif not names:
            untested += 1
            print(f"{req.id}  NO TEST")
        else:
            print(f"{req.id}  {len(names)} test(s)")
            for name in names[: args.most]:
                print(f"    {name}")
            if len(names) > args.most:
                print(f"    … and {len(names) - args.most} more")
    print(f"{untested} requirement(s) without a test")
    return 0


def _selftest(args: argparse.Namespace) -> int:
    from conformance.selftest import run_all

    failures = 0
    print(f"{'adapter':<40}{'verdict':<12}caught by")
    for bad, verdict in run_all(args.jobs):
        if bad is None:
            ok = verdict.exit_code == 0
            print(f"{verdict.impl:<40}{'passes' if ok else 'FAILS':<12}-")
        else:
            missing = sorted(set(bad.caught_by) - set(verdict.violated))
            ok = verdict.rejected and not missing
            caught = ", ".join(verdict.violated) or "-"
            note = f"  (expected also {', '.join(missing)})" if missing else ""
            print(f"{verdict.impl:<40}{'rejected' if verdict.rejected else 'ACCEPTED':<12}{caught}{note}")
        if not ok:
            failures += 1
            print(verdict.output, file=sys.stderr)
    return 1 if failures else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="subagent-conformance",
        description="Conformance suite for the subagent result contract.",
    )
    parser.add_argument("--spec", type=Path, default=None, help="the spec folder (default: the shipped spec)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check-spec", help="load and check spec/, naming every problem by file, line and field")
    check.set_defaults(run=_check_spec)

    docs = commands.add_parser("docs", help="render spec/ into docs/contract.md")
    docs.add_argument(
        "--output", type=Path, default=Path("docs/contract.md"), help="where to write (default: %(default)s)"
    )
    docs.add_argument("--check", action="store_true", help="fail when the file differs from a fresh rendering")
    docs.set_defaults(run=_docs)

    coverage = commands.add_parser("coverage", help="print every requirement with the tests that check it")
    coverage.add_argument("--most", type=int, default=5, help="tests to list per requirement (default: %(default)s)")
    coverage.set_defaults(run=_coverage)

    selftest = commands.add_parser(
        "selftest", help="run the suite against the reference and every known-bad adapter; fail if any bad one passes"
    )
    selftest.add_argument("--jobs", type=int, default=None, help="runs at once (default: one per CPU)")
    selftest.set_defaults(run=_selftest)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
