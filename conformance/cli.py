"""The ``subagent-conformance`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance.cli_products import add_product_commands, load_or_say


def spec_fixtures(spec: Path | None) -> Path | None:
    """The fixtures that belong to a spec folder given with --spec: the ``fixtures`` folder beside
    it (as in a checkout, spec/ and fixtures/ side by side), else None (the shipped ones)."""
    if spec is None:
        return None
    beside = spec.resolve().parent / "fixtures"
    return beside if (beside / "scenarios").is_dir() or (beside / "recordings").is_dir() else None


def _check_spec(args: argparse.Namespace) -> int:
    from conformance.spec_checks import deep_problems

    spec = load_or_say(args)
    if spec is None:
        return 1
    fixtures = args.fixtures or spec_fixtures(args.spec)
    if problems := deep_problems(spec, fixtures):
        print(f"the spec has {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    count = sum(1 for _ in spec.requirements())
    print(
        f"spec {spec.version}: {len(spec.areas)} areas, {count} requirements, no problems "
        "(golden vectors agree with the oracles; scenario scripts and recordings cases load"
        + (f", from {fixtures}" if fixtures else "")
        + ")"
    )
    return 0


def _docs(args: argparse.Namespace) -> int:
    """Render every page of docs/ (the requirement tests come from one collection-only session);
    with --check, fail naming each page that differs from a fresh rendering or is left over."""
    from conformance.docs import collect, render_docs

    spec = load_or_say(args)
    if spec is None:
        return 1
    files = render_docs(spec, collect(spec))
    target: Path = args.output
    if args.check:
        stale = [name for name, text in files.items() if _read(target / name) != text]
        generated = {target / name for name in files}
        stale += [str(p.relative_to(target)) for p in sorted((target / "contract").glob("*.md")) if p not in generated]
        if stale:
            print(
                f"{target}/ is out of date with spec/ ({', '.join(stale)}): run `subagent-conformance docs` "
                "and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"{target}/ matches spec/ ({len(files)} pages)")
        return 0
    for name, text in files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text, encoding="utf-8")
    for left in sorted((target / "contract").glob("*.md")):
        if str(left.relative_to(target)) not in files:
            left.unlink()
    print(f"wrote {len(files)} pages under {target}/")
    return 0


def _init(args: argparse.Namespace) -> int:
    """Write a harness's starter into DIR, overwriting nothing (conformance/starter)."""
    from conformance.starter import StarterError, write_starter

    spec = load_or_say(args)
    if spec is None:
        return 1
    try:
        written = write_starter(spec, args.lang, args.dir)
    except StarterError as exc:
        print(f"init: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    adapter = "adapter.py" if args.lang == "python" else "adapter.mjs"
    print(f"next: fill in the operations of {adapter}, list known gaps in known-gaps.yaml, push")
    return 0


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _coverage(args: argparse.Namespace) -> int:
    """Every requirement with the tests that name it; fails when one that needs a test has none,
    by the rule of the collection gate (conformance/verdict/coverage.py)."""
    from conformance.verdict.coverage import PROJECT, collect_whole_suite, describe, untested

    spec = load_or_say(args)
    if spec is None:
        return 1
    try:
        gate = collect_whole_suite()
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    for req in spec.requirements():
        names = sorted(set(gate.tests.get(req.id, [])))
        if req.excluded:
            print(f"{req.id}  excluded: {' '.join(req.excluded.split())[:100]}")
        elif names:
            print(f"{req.id}  {len(names)} test(s)")
            for name in names[: args.most]:
                print(f"    {name}")
            if len(names) > args.most:
                print(f"    … and {len(names) - args.most} more")
        elif req.tested_by == PROJECT and not gate.scope.project:
            print(f"{req.id}  tested by the project's own tests (tests/ of a checkout; not in this installation)")
        else:
            print(f"{req.id}  NO TEST")
    if gate.unknown:
        print("requirement markers name IDs the spec does not define:\n  " + "\n  ".join(gate.unknown))
    missing = untested(spec, gate.tests, gate.scope)
    print(f"{len(missing)} requirement(s) without a test" + (":\n" + describe(spec, missing) if missing else ""))
    return 1 if missing or gate.unknown else 0


def _selftest(args: argparse.Namespace) -> int:
    from conformance.harness import profiles
    from conformance.verdict.selftest import SEEDED_PROFILE, KnownBad, known_entries, run_all

    profile = args.profile or os.environ.get(profiles.VARIABLE) or "selftest"
    if profile not in profiles.PROFILES:
        where = "--profile" if args.profile else f"${profiles.VARIABLE}"
        print(
            f"subagent-conformance selftest: {where}={profile!r} names no profile; "
            f"its profiles are {', '.join(profiles.PROFILES)}",
            file=sys.stderr,
        )
        return 2
    if not args.timeout >= 0:  # NaN too
        print(f"subagent-conformance selftest: --timeout={args.timeout:g}: seconds, 0 for no limit", file=sys.stderr)
        return 2
    timeout = args.timeout or None
    unknown = sorted(set(args.adapter) - known_entries())
    if unknown or (args.seeds and not args.adapter):
        why = "--seeds needs --adapter"
        if unknown:
            why = f"--adapter={', '.join(unknown)}: no known-bad or known-good entry"
        print(f"subagent-conformance selftest: {why}", file=sys.stderr)
        return 2
    print(f"profile {profile!r}; each run is killed after {f'{timeout:g} s' if timeout else 'no limit'}")
    if args.seeds:
        print(f"and under seeds {', '.join(map(str, args.seeds))} (profile {SEEDED_PROFILE!r})")
    failures = 0
    runs = run_all(
        args.jobs, only=args.only, profile=profile, timeout=timeout, adapters=tuple(args.adapter), seeds=args.seeds
    )
    width = max([40, *(len(verdict.impl) + 2 for _, verdict in runs)])
    print(f"{'adapter':<{width}}{'verdict':<12}violated")
    for subject, verdict in runs:
        if not isinstance(subject, KnownBad):  # the reference, or a known-good variant: must pass
            ok = verdict.exit_code == 0
            kind = "reference" if subject is None else f"known-good: {subject.choice}"
            shown = ", ".join(verdict.violated) or "-"
            print(f"{verdict.impl:<{width}}{'passes' if ok else 'REJECTED':<12}{shown}  ({kind})")
        else:
            missing = sorted(set(subject.caught_by) - set(verdict.violated))
            wider = sorted(set(verdict.violated) - set(subject.caught_by))
            ok = verdict.rejected and not missing and not wider  # exact blame: equal, not merely contained
            caught = ", ".join(verdict.violated) or "-"
            note = (f"  (expected also {', '.join(missing)})" if missing else "") + (
                f"  (over-blamed: {', '.join(wider)})" if wider else ""
            )
            print(f"{verdict.impl:<{width}}{'rejected' if verdict.rejected else 'ACCEPTED':<12}{caught}{note}")
        if not ok:
            failures += 1
            print(verdict.output, file=sys.stderr)
    return 1 if failures else 0


def _matrix(args: argparse.Namespace) -> int:
    from conformance.verdict.matrix import MatrixError, render

    try:
        text = render(list(args.reports), args.markdown, args.html, args.docs)
    except MatrixError as exc:
        print(f"subagent-conformance matrix: {exc}", file=sys.stderr)
        return 2
    if args.markdown is None and args.html is None:
        print(text, end="")
    return 0


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated integers, e.g. 1,2,3") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="subagent-conformance",
        description="Conformance suite for the subagent result contract.",
    )
    parser.add_argument("--spec", type=Path, default=None, help="the spec folder (default: the shipped spec)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "check-spec",
        help="load and check spec/ (its golden vectors against the oracles too) and the scenario scripts and "
        "recordings cases built on it, naming every problem by file, line and field",
    )
    check.add_argument(
        "--fixtures",
        type=Path,
        default=None,
        metavar="DIR",
        help="the fixtures folder to check (default: the fixtures folder beside --spec DIR, else the shipped one)",
    )
    check.set_defaults(run=_check_spec)

    docs = commands.add_parser("docs", help="render spec/ into docs/ (docs/contract.md and the pages it links)")
    docs.add_argument(
        "--output", type=Path, default=Path("docs"), help="the folder to write into (default: %(default)s)"
    )
    docs.add_argument("--check", action="store_true", help="fail when the file differs from a fresh rendering")
    docs.set_defaults(run=_docs)

    init = commands.add_parser(
        "init", help="write a harness's starter: an adapter skeleton, known-gaps.yaml, the CI workflow, constraints"
    )
    init.add_argument("--lang", choices=["python", "typescript"], required=True, help="the adapter's language")
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), help="where (default: the current folder)")
    init.set_defaults(run=_init)

    coverage = commands.add_parser("coverage", help="print every requirement with the tests that check it")
    coverage.add_argument("--most", type=int, default=5, help="tests to list per requirement (default: %(default)s)")
    coverage.set_defaults(run=_coverage)

    selftest = commands.add_parser(
        "selftest", help="run the suite against the reference and every known-bad adapter; fail if any bad one passes"
    )
    selftest.add_argument("--jobs", type=int, default=None, help="runs at once (default: one per CPU)")
    selftest.add_argument(
        "--only", choices=["good", "bad"], default=None, help="the reference and only the known-good or known-bad ones"
    )
    selftest.add_argument(
        "--profile", default=None, help="the Hypothesis profile of every run (default: $SUBAGENT_CONFORMANCE_PROFILE, "
        "else selftest); e.g. thorough",
    )  # fmt: skip
    selftest.add_argument(
        "--adapter", action="append", default=[], metavar="MODULE",
        help="run only this known-bad or known-good entry (repeatable), without the reference",
    )  # fmt: skip
    selftest.add_argument(
        "--seeds", type=_seeds, default=(), metavar="N,N,…",
        help="also run each --adapter under these Hypothesis seeds (random profile 'default'), e.g. 1,2,3",
    )  # fmt: skip
    selftest.add_argument(
        "--timeout", type=float, default=600, help="seconds before a run is killed (0: no limit; default: %(default)s)"
    )
    selftest.set_defaults(run=_selftest)

    matrix = commands.add_parser(
        "matrix", help="render several conformance reports into one requirement x implementation table"
    )
    matrix.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json", help="--conformance-report files")
    matrix.add_argument("--markdown", type=Path, default=None, metavar="PATH", help="write the Markdown table here")
    matrix.add_argument("--html", type=Path, default=None, metavar="PATH", help="write the static HTML page here")
    matrix.add_argument(
        "--docs-url",
        "--docs",
        dest="docs",
        default=None,
        metavar="URL",
        help="the rendered contract's index (contract.md) that requirement IDs link to, a URL or path; each links "
        "to <area>.md#<ID> beside it (default: the contract published with this version of the suite, the Source "
        "repository of the package's project URLs at its version tag)",
    )
    matrix.set_defaults(run=_matrix)
    add_product_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
