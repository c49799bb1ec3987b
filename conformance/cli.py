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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
