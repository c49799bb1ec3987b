"""The ``products`` and ``upgrade-check`` commands of ``subagent-conformance`` (the real-products
tier and the upgrade gate): apart from ``conformance.cli`` so each stays readable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.spec import Spec, SpecError, load_spec


def load_or_say(args: argparse.Namespace) -> Spec | None:
    """The spec, or None after printing every problem it has."""
    try:
        return load_spec(args.spec)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return None


def _released(name: str, package: str, version: str) -> str:
    """``version`` (or a dist-tag) as an exact version npm has published: checked against npm's
    list when npm can be asked, with the nearest releases named when it is not there."""
    from conformance.products.packages import resolve_version
    from conformance.products.releases import check_published, published_versions

    exact = resolve_version(package, version)
    check_published(package, exact, published_versions(package))
    return exact


def _products_install(args: argparse.Namespace) -> int:
    """Install every shipped version of the products (or the given released one) into the cache,
    in parallel; a no-op for what is there."""
    from concurrent.futures import ThreadPoolExecutor

    from conformance.products.packages import ProductError, install, product_version, shipped_versions

    spec = load_or_say(args)
    if spec is None:
        return 2
    if args.version and not args.product:
        print("subagent-conformance products install: --version needs --product", file=sys.stderr)
        return 2
    names = [args.product] if args.product else ["codex", "claude-code"]
    wanted = [(name, version) for name in names for version in shipped_versions(spec, name)]
    if args.version:
        try:
            wanted = [(args.product, _released(args.product, product_version(spec, args.product)[0], args.version))]
        except ProductError as exc:
            print(f"subagent-conformance products install: {exc}", file=sys.stderr)
            return 2

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


def _contract_at(spec: Spec, name: str, version: str) -> Spec:
    """The contract a recording of ``version`` is made under: the spec at that version where it
    covers it, else at the nearest shipped version not newer (the recorder reads only the client
    frames from it, which every version shares; the case expectations are that neighbour's)."""
    from conformance.products.packages import shipped_versions
    from conformance.products.upgrade import nearest

    try:
        return spec.at({name: version})
    except KeyError:
        neighbour = nearest(list(shipped_versions(spec, name)), version)
        print(f"{name} {version} is not covered by the spec: recording under the contract of {neighbour}")
        return spec.at({name: neighbour})


def _products_record(args: argparse.Namespace) -> int:
    """Re-record the wire transcripts of the real-products cases at every shipped version (or the
    given released one, shipped or not)."""
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
    spec = load_or_say(args)
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
            package, _ = product_version(spec, name)
            shipped = shipped_versions(spec, name)
            for version in [_released(name, package, args.version)] if args.version else shipped:
                at = _contract_at(spec, name, version)
                done, _ = install(name, package, version, args.cache_dir, log=print)
                for case in (c.at(at) for c in cases if c.product == name):
                    with tempfile.TemporaryDirectory(prefix=f"record-{case.id}-") as folder:
                        recording = record_case(at, case, done, Path(folder))
                    print(f"wrote {write_recording(recording, output)}")
    except (ProductError, RecordingError, SpecError) as exc:
        print(f"subagent-conformance products record: {exc}", file=sys.stderr)
        return 2
    return 0


def _upgrade_check(args: argparse.Namespace) -> int:
    """A release the spec covers: exit 0 when its official unions agree with its entry, 1 when
    they differ. One it does not cover (release day): exit 0 when nothing the contract reads
    changed against a covered neighbour (--write-versions FILE records it), 1 when something did
    (a draft entry is written). 2 on errors."""
    import json

    from conformance.products.draft import dump
    from conformance.products.gate_render import render, render_release
    from conformance.products.packages import EXACT_VERSION, ProductError, resolve_version
    from conformance.products.release import release_check
    from conformance.products.upgrade import UnionError, package, upgrade_check
    from conformance.spec.releases import covered, write_product_versions

    spec = load_or_say(args)
    if spec is None:
        return 2
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    try:
        version = args.version
        if args.source is None and not EXACT_VERSION.match(version):
            version = resolve_version(package(spec, args.product), version)  # a dist-tag, once
        if covered(spec.areas[args.product], version):
            report, _ = upgrade_check(spec, args.product, version, args.cache_dir, log, args.source)
            print(json.dumps(report, indent=2) if args.json else render(report))
            return 0 if report["equal"] else 1
        report, entry, draft = release_check(
            spec, args.product, version, args.cache_dir, log, args.source, args.recordings
        )
        if entry is not None and args.write_versions is not None:
            write_product_versions(args.write_versions, entry)
            report["versions_file"] = str(args.write_versions)
        if draft is not None:
            path = args.draft or Path(f"{args.product}-{report['version']}.draft.yaml")
            path.write_text(dump(draft, report["decisions"]), encoding="utf-8")
            report["draft"] = str(path)
    except (ProductError, UnionError, OSError) as exc:
        print(f"subagent-conformance upgrade-check: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else render_release(report))
    return 0 if report["equivalent_to"] is not None else 1


def add_product_commands(commands: Any) -> None:
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
        "--version",
        default=None,
        help="only this released version (or dist-tag), shipped or not; checked against npm's list (needs --product)",
    )
    install.add_argument("--cache-dir", **cache)
    install.set_defaults(run=_products_install)
    record = actions.add_parser("record", help="run every real-products case and rewrite fixtures/recordings/")
    record.add_argument("--product", **which, help="only this product's cases")
    record.add_argument("--case", default=None, help="only the case of this name")
    record.add_argument(
        "--version",
        default=None,
        help="only this released version (or dist-tag), shipped or not; checked against npm's list "
        "(needs --product; default: every shipped one)",
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
        help="compare a product release's official unions with its entry; for a release the spec does not cover, "
        "with both covered neighbours (online also its wire): exit 0 when nothing the contract reads changed "
        "(--write-versions FILE records it), else write a draft versions entry and list the decisions to take",
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
        "--recordings",
        type=Path,
        default=None,
        metavar="DIR",
        help="for a release the spec does not cover: read its recordings from DIR, laid out as fixtures/recordings "
        "(`products record --version V --output DIR` writes them), instead of recording its cases; with --from, "
        "the wire is then checked offline",
    )
    gate.add_argument(
        "--write-versions",
        type=Path,
        default=None,
        metavar="FILE",
        help="for a release the spec does not cover that is equivalent to a covered neighbour, record it in FILE "
        "(spec/schema/product-versions.json; added to an existing one) for `pytest --product-versions=FILE`",
    )
    gate.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON (spec/schema/real-products.json#/$defs/upgrade_check)",
    )
    gate.add_argument("--cache-dir", **cache)
    gate.set_defaults(run=_upgrade_check)
