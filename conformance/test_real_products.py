"""Tier 4, the real products (opt-in: --real-products): the Codex app-server and the Claude Code
CLI at the versions the adapter claims (the session's spec stands at them), installed by
``subagent-conformance products install``, driven through the adapter's process operations
(run_codex, run_claude_code) against fake model services on 127.0.0.1 that fail on cue
(fixtures/recordings/cases.yaml). The fresh recordings of Claude Code come through the real
Agent SDK's query() under Node at the claimed version (conformance/products/sdk_run.py), the
stack a provider ships.

The products run with retries off and no traffic off loopback (conformance.products.packages.offline);
each outcome is checked against the result the spec's format rules render from the case's
failure facts at that version (a case's ``versions`` entry, where the product does otherwise
there). Without --real-products every test here is reported as skipped, never passed; with it
and the claimed version missing, every test errors naming the install command (the tier never
downloads 400 MB on its own).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.adapter import Adapter
from conformance.plugin import session_of
from conformance.process.blame import Context, Problem, blamed, outcome_problems
from conformance.process.calls import call_runs
from conformance.products import provenance
from conformance.products.draft import recorded_catch_alls
from conformance.products.packages import PRODUCTS, Installed, OfflineRun, cache_root, installed
from conformance.products.recorder import prepare, record_case, running_as_root, server_for, write_recording
from conformance.products.recordings import Case, expected_results, load_cases
from conformance.products.replay import replay
from conformance.products.sdk_run import sdk_log
from conformance.products.upgrade import compare, official_unions
from conformance.spec import Spec, load_spec
from conformance.verdict.blame import Violation

# The operations these tests call (conformance/verdict/operations.py: what a changed operation's variants run over).
OPERATIONS = frozenset({"claude_code_outcome", "codex_outcome", "run_claude_code", "run_codex"})

Claim = Callable[[str, str], None]
Json = Any
requirement = pytest.mark.requirement
claims = pytest.mark.claims  # checked before the tier's opt-in (conformance/conftest.py)
pytestmark = pytest.mark.real_products

_SPEC = load_spec()
CASES = load_cases(_SPEC)
DEADLINE = 60.0  # a real run takes well under a second; this only bounds a hung adapter


RealProducts = Callable[[str], Installed]


@pytest.fixture
def real_products(spec: Spec, request: pytest.FixtureRequest) -> RealProducts:
    """The installed product at the claimed release: the one the session's spec stands at, or a
    release verified on release day (--product-versions), which runs itself under its covered
    neighbour's contract; a clear error naming the install command when it is not in the cache.
    The test's report names what ran (the report's ``run.products``: conformance/products/provenance.py)."""
    verified = session_of(request.config).verified

    def get(name: str) -> Installed:
        package, version = provenance.release_to_run(spec, name, verified)
        got = installed(name, package, version)
        if got is None:
            pytest.fail(
                f"--real-products: {package}@{version} is not installed in {cache_root()}; run "
                f"`subagent-conformance products install --product {name} --version {version}` first",
                pytrace=False,
            )
        request.node.user_properties.append((provenance.PROPERTY, json.dumps(provenance.provenance(got))))
        return got

    return get


def _operation(product: str) -> str:
    return f"run_{product.replace('-', '_')}"


def _request(case: Case, run: OfflineRun) -> Json:
    return {
        "argv": run.argv,
        "task": [{"type": "text", "text": case.task}],
        "cwd": str(run.cwd),
        "env": run.env,
        "mode": case.mode,
        "cancel": None,
        "dispose_after_ms": None,
    }


def _applies(case: Case) -> None:
    """Skip, saying so, a case that observes the product as root where the tier does not run as root."""
    if case.as_root and not running_as_root():
        pytest.skip(f"{case.id} observes the product running as root; this tier does not run as root")


def _run(
    case: Case, adapter: Adapter, product: Installed, folder: Path, wrap: list[str] | None = None
) -> tuple[Json, Json, int]:
    """One real run of ``case`` through the adapter: its outcome, the RUN sent and how many model calls it made."""
    with server_for(case, folder) as server:
        run = prepare(case, product, server, folder)
        if wrap:
            run = OfflineRun([*wrap, *run.argv], run.env, run.cwd)
        request = _request(case, run)
        [outcome] = call_runs(adapter, _operation(case.product), [request], DEADLINE)
        return outcome, request, len(server.model_calls())


def _check(spec: Spec, case: Case, outcome: Json, request: Json) -> None:
    """Every case publishes its run (CC-035 for the start-up failures too) and disposes cleanly;
    its result is one the spec renders from the case (two where the case races the exit). A
    difference is blamed on the rule it shows (conformance/process/blame.py)."""
    allowed = {
        "start": [{"published": True}],
        "result": expected_results(spec, case),
        "dispose": [[{"resolved": True}] * 2],
    }
    if all(outcome.get(k) in v for k, v in allowed.items()):
        return
    startup = spec.table(case.product, "startup_rejections").requirements
    ctx = Context(spec, case.product, covers=tuple(case.covers))
    problems = outcome_problems(ctx, allowed, outcome, startup)
    problems = problems or [Problem(tuple(case.covers), "the outcome differs")]
    raise Violation(
        blamed(problems),
        operation=_operation(case.product),
        input={"runs": [request]},
        expected={k: v[0] if len(v) == 1 else {"one of": v} for k, v in allowed.items()},
        actual=outcome,
        detail="\n".join(f"{p.message} [{', '.join(p.requirements)}]" for p in problems),
        sections={"case": f"{case.id} ({case.where}): {case.description}"},
    )


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=[requirement(*c.covers), claims("process_drivers", c.product)]) for c in CASES],
)
def test_real_product_case(
    case: Case, spec: Spec, adapter: Adapter, claim: Claim, real_products: RealProducts, tmp_path: Path
) -> None:
    claim("process_drivers", case.product)
    _applies(case)
    case = case.at(spec)  # the session's spec stands at the claimed version
    outcome, request, calls = _run(case, adapter, real_products(case.product), tmp_path)
    _check(spec, case, outcome, request)
    assert calls == case.model_calls, (
        f"{case.id}: {calls} model calls; the case expects {case.model_calls} (retries are off)"
    )


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=[requirement(*c.covers), claims("providers", c.product)]) for c in CASES]
)
def test_fresh_recording_replays(
    case: Case, spec: Spec, adapter: Adapter, claim: Claim, real_products: RealProducts, tmp_path: Path
) -> None:
    """A transcript recorded now, as `products record` would, replays like the committed one: the
    product still shows what the case claims, and the pure operation reads it as the spec says."""
    claim("providers", case.product)
    _applies(case)
    case = case.at(spec)
    recording = record_case(spec, case, real_products(case.product), tmp_path / "run")
    replay(spec, case, recording, adapter.call, write_recording(recording, tmp_path / "fresh"))


# strace lines such as: 1234 connect(7, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("1.2.3.4")}, 16) = 0
_CONNECT = re.compile(
    r"connect\(\d+, \{sa_family=(AF_INET6?),.*?htons\((\d+)\)"
    r'.*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")'
)
_LOOPBACK = ("127.0.0.1", "::1", "::ffff:127.0.0.1")


@pytest.mark.parametrize("product", [pytest.param(p, marks=claims("process_drivers", p)) for p in PRODUCTS])
def test_no_traffic_beyond_loopback(
    product: str, spec: Spec, adapter: Adapter, claim: Claim, real_products: RealProducts, tmp_path: Path
) -> None:
    """Under strace, one complete run of each product connects to nothing but 127.0.0.1 (DNS
    included: a lookup of any name is a connection to port 53)."""
    claim("process_drivers", product)
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed: the absence of off-loopback traffic cannot be observed here")
    case = next(c for c in (c.at(spec) for c in CASES) if c.product == product and "failure" not in c.expect)
    log = tmp_path / "strace.log"
    trace = [strace, "-f", "-qq", "-e", "trace=connect", "-o", str(log)]
    outcome, request, _ = _run(case, adapter, real_products(product), tmp_path, trace)
    _check(spec, case, outcome, request)
    _assert_loopback(log, f"the real {product}")


def _assert_loopback(log: Path, what: str) -> None:
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "connect(" in text, f"strace saw no connect() at all: the run was not traced\n{text[:2000]}"
    foreign = [
        line
        for line in text.splitlines()
        if (m := _CONNECT.search(line)) and ((m.group(3) or m.group(4)) not in _LOOPBACK or m.group(2) == "53")
    ]
    assert foreign == [], f"{what} connected beyond 127.0.0.1:\n" + "\n".join(foreign)


@claims("providers", "claude-code")
def test_the_agent_sdk_run_stays_on_loopback(
    spec: Spec, claim: Claim, real_products: RealProducts, tmp_path: Path
) -> None:
    """Under strace, the real Agent SDK's query() under Node, with the CLI it spawns (what the
    recordings come through), connects to nothing but 127.0.0.1, and yields the case's result."""
    claim("providers", "claude-code")
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed: the absence of off-loopback traffic cannot be observed here")
    case = next(c for c in (c.at(spec) for c in CASES) if c.product == "claude-code" and "failure" not in c.expect)
    log = tmp_path / "strace.log"
    with server_for(case, tmp_path) as server:
        run = prepare(case, real_products("claude-code"), server, tmp_path)
        trace = [strace, "-f", "-qq", "-e", "trace=connect", "-o", str(log)]
        items, _ = sdk_log(real_products("claude-code"), run, case.mode, case.task, tmp_path, DEADLINE, trace)
    results = [i["message"] for i in items if "message" in i and i["message"].get("type") == "result"]
    assert [r.get("result") for r in results] == [case.expect["output_text"]], items[-3:]
    _assert_loopback(log, "the real Agent SDK")


UNION = {"codex": "CDX-001", "claude-code": "CC-001"}  # the requirements that state the unions


@pytest.mark.parametrize(
    "product", [pytest.param(p, marks=[requirement(r), claims("providers", p)]) for p, r in UNION.items()]
)
def test_claimed_version_declares_the_spec_unions(product: str, spec: Spec, real_products: RealProducts) -> None:
    """The official unions of the claimed version, read as the upgrade gate reads them, are the
    ones the spec maps at that version."""
    catch_alls = recorded_catch_alls(spec, product)  # the catch-all members the version entry records
    unions = [compare(spec, union, catch_alls) for union in official_unions(real_products(product))]
    differences = [u for u in unions if u["added"] or u["removed"]]
    version = spec.areas[product].version
    assert unions and differences == [], f"{product} {version} declares other unions than the spec maps: {differences}"
