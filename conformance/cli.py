"""The ``subagent-conformance`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.spec import Spec, SpecError, load_spec


def _load(args: argparse.Namespace) -> Spec | None:
    """The spec, or None after printing every problem it has."""
    try:
        return load_spec(args.spec)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return None


def _check_spec(args: argparse.Namespace) -> int:
    from conformance.spec_checks import deep_problems

    spec = _load(args)
    if spec is None:
        return 1
    if problems := deep_problems(spec, args.fixtures):
        print(f"the spec has {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    count = sum(1 for _ in spec.requirements())
    print(
        f"spec {spec.version}: {len(spec.areas)} areas, {count} requirements, no problems "
        "(golden vectors agree with the oracles; scenario scripts and recordings cases load)"
    )
    return 0


def _docs(args: argparse.Namespace) -> int:
    """Render every page of docs/ (the requirement tests come from one collection-only session);
    with --check, fail naming each page that differs from a fresh rendering or is left over."""
    from conformance.docs import collect, render_docs

    spec = _load(args)
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


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _coverage(args: argparse.Namespace) -> int:
    """Every requirement with the tests that name it; fails when one that needs a test has none,
    by the rule of the collection gate (conformance/verdict/coverage.py)."""
    from conformance.verdict.coverage import PROJECT, collect_whole_suite, describe, untested

    spec = _load(args)
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
    from conformance.verdict.selftest import KnownBad, run_all

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
    print(f"profile {profile!r}; each run is killed after {f'{timeout:g} s' if timeout else 'no limit'}")
    failures = 0
    print(f"{'adapter':<40}{'verdict':<12}violated")
    for subject, verdict in run_all(args.jobs, only=args.only, profile=profile, timeout=timeout):
        if not isinstance(subject, KnownBad):  # the reference, or a known-good variant: must pass
            ok = verdict.exit_code == 0
            kind = "reference" if subject is None else f"known-good: {subject.choice}"
            shown = ", ".join(verdict.violated) or "-"
            print(f"{verdict.impl:<40}{'passes' if ok else 'REJECTED':<12}{shown}  ({kind})")
        else:
            missing = sorted(set(subject.caught_by) - set(verdict.violated))
            wider = sorted(set(verdict.violated) - set(subject.caught_by))
            ok = verdict.rejected and not missing and not wider  # exact blame: equal, not merely contained
            caught = ", ".join(verdict.violated) or "-"
            note = (f"  (expected also {', '.join(missing)})" if missing else "") + (
                f"  (over-blamed: {', '.join(wider)})" if wider else ""
            )
            print(f"{verdict.impl:<40}{'rejected' if verdict.rejected else 'ACCEPTED':<12}{caught}{note}")
        if not ok:
            failures += 1
            print(verdict.output, file=sys.stderr)
    return 1 if failures else 0


def _products_install(args: argparse.Namespace) -> int:
    """Install every shipped version of the products (or the given one) into the cache, in
    parallel; a no-op for what is there."""
    from concurrent.futures import ThreadPoolExecutor

    from conformance.products.packages import ProductError, install, product_version, resolve_version, shipped_versions

    spec = _load(args)
    if spec is None:
        return 2
    if args.version and not args.product:
        print("subagent-conformance products install: --version needs --product", file=sys.stderr)
        return 2
    names = [args.product] if args.product else ["codex", "claude-code"]
    wanted = [(name, version) for name in names for version in shipped_versions(spec, name)]
    if args.version:
        package, _ = product_version(spec, args.product)
        wanted = [(args.product, resolve_version(package, args.version))]

    def one(name: str, version: str) -> str:
        package, _ = product_version(spec, name)
        done, ran = install(name, package, version, args.cache_dir, log=print)
        state = "installed" if ran else "already installed"
        return f"{name}: {package}@{version} {state}: {done.binary} ({done.product_version})"

    failed = 0
    with ThreadPoolExecutor(2) as pool:  # npm is mostly waiting on the registry; two at a time
        for future in [pool.submit(one, name, version) for name, version in wanted]:
            try:
                print(future.result())
            except ProductError as exc:
                failed += 1
                print(f"subagent-conformance products install: {exc}", file=sys.stderr)
    return 2 if failed else 0


def _products_record(args: argparse.Namespace) -> int:
    """Re-record the wire transcripts of the real-products cases at every shipped version (or the given one)."""
    import tempfile

    from conformance.products.packages import ProductError, install, product_version, shipped_versions
    from conformance.products.recorder import RecordingError, record_case, write_recording
    from conformance.products.recordings import load_cases, recordings_dir
    from conformance.spec.resources import inside_installed_package

    output = args.output or recordings_dir()
    if inside_installed_package(output):
        print(
            f"subagent-conformance products record: {output} is inside the installed suite, whose recordings "
            "are shipped expectations; pass --output DIR to record elsewhere",
            file=sys.stderr,
        )
        return 2
    spec = _load(args)
    if spec is None:
        return 2
    if args.version and not args.product:
        print("subagent-conformance products record: --version needs --product", file=sys.stderr)
        return 2
    try:
        cases = [c for c in load_cases(spec) if args.product in (None, c.product) and args.case in (None, c.name)]
        if not cases:
            print("no case matches --product/--case", file=sys.stderr)
            return 2
        for name in sorted({c.product for c in cases}):
            shipped = shipped_versions(spec, name)
            if args.version and args.version not in shipped:
                raise ProductError(f"{name} {args.version} is not shipped (shipped: {', '.join(shipped)})")
            for version in [args.version] if args.version else shipped:
                at = spec.at({name: version})
                done, _ = install(name, *product_version(at, name), args.cache_dir, log=print)
                for case in (c.at(at) for c in cases if c.product == name):
                    with tempfile.TemporaryDirectory(prefix=f"record-{case.id}-") as folder:
                        recording = record_case(at, case, done, Path(folder))
                    print(f"wrote {write_recording(recording, output)}")
    except (ProductError, RecordingError, SpecError) as exc:
        print(f"subagent-conformance products record: {exc}", file=sys.stderr)
        return 2
    return 0


def _upgrade_check(args: argparse.Namespace) -> int:
    """Exit 0 when the version is shipped and its official unions agree with its entry; 1 when it is
    not shipped (a draft entry is written) or they differ; 2 on errors."""
    import json

    from conformance.products.draft import dump
    from conformance.products.packages import ProductError
    from conformance.products.upgrade import UnionError, render, upgrade_check

    spec = _load(args)
    if spec is None:
        return 2
    try:
        report, draft = upgrade_check(
            spec,
            args.product,
            args.version,
            args.cache_dir,
            log=lambda m: print(m, file=sys.stderr),
            source=args.source,
        )
        if draft is not None:
            path = args.draft or Path(f"{args.product}-{report['version']}.draft.yaml")
            path.write_text(dump(draft, report["decisions"]), encoding="utf-8")
            report["draft"] = str(path)
    except (ProductError, UnionError, OSError) as exc:
        print(f"subagent-conformance upgrade-check: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0 if report["shipped"] and report["equal"] else 1


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
        "--fixtures", type=Path, default=None, metavar="DIR", help="the fixtures folder to check (default: the shipped)"
    )
    check.set_defaults(run=_check_spec)

    docs = commands.add_parser("docs", help="render spec/ into docs/ (docs/contract.md and the pages it links)")
    docs.add_argument(
        "--output", type=Path, default=Path("docs"), help="the folder to write into (default: %(default)s)"
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
    selftest.add_argument(
        "--only", choices=["good", "bad"], default=None, help="the reference and only the known-good or known-bad ones"
    )
    selftest.add_argument(
        "--profile", default=None, help="the Hypothesis profile of every run (default: $SUBAGENT_CONFORMANCE_PROFILE, "
        "else selftest); e.g. thorough",
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
        "to <area>.md#<ID> beside it (default: the contract shipped with the suite, as a file URL)",
    )
    matrix.set_defaults(run=_matrix)
    _add_product_commands(commands)
    return parser


def _add_product_commands(commands: Any) -> None:
    """products install|record and upgrade-check (the real-products tier and the upgrade gate)."""
    cache = {
        "type": Path,
        "default": None,
        "metavar": "DIR",
        "help": "the products cache (default: $SUBAGENT_CONFORMANCE_PRODUCTS, or under ~/.cache/subagent-conformance)",
    }
    which = {"choices": ["codex", "claude-code"], "default": None}
    products = commands.add_parser(
        "products", help="install the real products from npm, or re-record their transcripts"
    )
    actions = products.add_subparsers(dest="action", required=True, metavar="ACTION")
    install = actions.add_parser(
        "install", help="npm-install every shipped product version into the cache (idempotent)"
    )
    install.add_argument("--product", **which, help="only this product (default: both)")
    install.add_argument(
        "--version", default=None, help="only this version (or dist-tag), shipped or not (needs --product)"
    )
    install.add_argument("--cache-dir", **cache)
    install.set_defaults(run=_products_install)
    record = actions.add_parser("record", help="run every real-products case and rewrite fixtures/recordings/")
    record.add_argument("--product", **which, help="only this product's cases")
    record.add_argument("--case", default=None, help="only the case of this name")
    record.add_argument(
        "--version", default=None, help="only this shipped version (needs --product; default: every shipped one)"
    )
    record.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write (default: fixtures/recordings of a checkout; required when the suite is installed)",
    )
    record.add_argument("--cache-dir", **cache)
    record.set_defaults(run=_products_record)
    gate = commands.add_parser(
        "upgrade-check",
        help="compare a product version's official unions with the nearest version the spec ships; for a version "
        "it does not ship, write a draft versions entry and list the decisions to take (exit 0: shipped and agreeing)",
    )
    gate.add_argument("--product", choices=["codex", "claude-code"], required=True)
    gate.add_argument(
        "--version", required=True, help="the version to check (exact, or an npm dist-tag such as latest)"
    )
    gate.add_argument(
        "--draft",
        type=Path,
        default=None,
        metavar="PATH",
        help="where to write the draft entry of a version the spec does not ship "
        "(default: <product>-<version>.draft.yaml in the current folder)",
    )
    gate.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        metavar="PATH",
        help="read the official union from this generated schema folder (codex: `codex app-server "
        "generate-json-schema --out PATH`) or sdk.d.ts (claude-code) instead of installing the version",
    )
    gate.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON (spec/schema/real-products.json#/$defs/upgrade_check)",
    )
    gate.add_argument("--cache-dir", **cache)
    gate.set_defaults(run=_upgrade_check)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
