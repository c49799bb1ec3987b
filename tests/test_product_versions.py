"""Product versions as data (issue #24): the spec at a claimed version, the claim check, the
version reaching the operations through the suite, and the fakes speaking that version's wire."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.adapter import Adapter
from conformance.harness.declaration import AdapterUsageError, check_declaration
from conformance.process.scenarios import Scenario, fake_argv, write_script
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

SPEC = load_spec()
DECLARATION: dict[str, Any] = {"protocol": "1", "bindings": [], "process_drivers": []}


def _entry(product: str, version: str) -> Any:
    return next(v for v in SPEC.areas[product].versions if v.version == version)


@pytest.mark.requirement("ADP-004")
@pytest.mark.parametrize(
    ("product", "version"),
    [
        ("codex", "0.172.0"),
        ("codex", "0.146.9"),
        ("codex", "0.153.1"),
        ("codex", "0.170.0"),
        ("claude-code", "2.1.220"),
    ],
)
def test_an_uncovered_release_is_one_usage_error_naming_the_ranges_and_the_gate(product: str, version: str) -> None:
    with pytest.raises(AdapterUsageError) as caught:
        check_declaration({**DECLARATION, "providers": {product: version}}, SPEC)
    message = str(caught.value)
    assert caught.value.condition == "unshipped-provider-version"
    assert SPEC.areas[product].ranges in message, message
    assert f"subagent-conformance upgrade-check --product {product} --version {version}" in message


@pytest.mark.requirement("ADP-004")
@pytest.mark.parametrize("product", ["codex", "claude-code"])
def test_every_covered_release_is_accepted(product: str) -> None:
    area = SPEC.areas[product]
    assert len(area.releases) == {"codex": 41, "claude-code": 101}[product]  # npm's list as measured, 0.153.1 aside
    for version in area.releases:
        check_declaration({**DECLARATION, "providers": {product: version}}, SPEC)  # raises if refused


@pytest.mark.parametrize(
    ("release", "entry"),
    [
        ("0.147.0", "0.147.0"),
        ("0.148.0-alpha.8", "0.147.0"),
        ("0.150.1", "0.148.0"),
        ("0.160.0", "0.159.0"),
        ("0.162.0-alpha.15", "0.161.0"),
        ("0.167.2", "0.166.0"),
        ("0.171.0", "0.171.0"),
        ("0.153.1", None),
        ("0.167.0", None),
        ("0.170.0", None),
        ("0.172.0", None),
    ],
)
def test_entry_for_finds_the_range_that_lists_a_release(release: str, entry: str | None) -> None:
    area = SPEC.areas["codex"]
    found = area.entry_for(release)
    assert (found.version if found else None) == entry
    assert area.covers(release) is (entry is not None)
    assert "0.153.1" in SPEC.areas["codex"].product["releases"]["not_covered"]  # type: ignore[index]


def test_neighbours_are_the_covered_releases_on_either_side() -> None:
    area = SPEC.areas["codex"]
    assert area.neighbours("0.170.0") == ("0.169.1", "0.171.0")
    assert area.neighbours("0.153.1") == ("0.153.0", "0.153.2")
    assert area.neighbours("0.172.0") == ("0.171.0", None)
    assert SPEC.areas["claude-code"].neighbours("0.3.335") == ("0.3.334", None)


MEASURED = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "2026-12-02" / "raw"


@pytest.mark.parametrize("summary", sorted(MEASURED.glob("codex-*.summary.json")), ids=lambda p: p.name[6:-13])
def test_the_union_at_every_measured_release_is_the_measured_one(summary: Path) -> None:
    """The spec at each release is exactly the CodexErrorInfo its generated schema declared
    (docs/measurements/2026-12-02): the strings, the objects and whether it has the catch-all."""
    release, measured = summary.name[6:-13], json.loads(summary.read_text(encoding="utf-8"))
    area = SPEC.at({"codex": release}).areas["codex"]
    assert set(area.vocabularies["variant_string"].values) == set(measured["strings"])
    assert set(area.vocabularies["variant_object"].values) == {next(iter(o)) for o in measured["objects"]}
    catch_all = any("catch_all" in e.union for e in area.versions[: area.versions.index(area.current) + 1])  # type: ignore[arg-type]
    assert catch_all is bool(measured["catch_all"])


def test_spec_at_moves_exactly_the_members_the_ranges_add() -> None:
    base, newer = SPEC.areas["codex"], SPEC.at({"codex": "0.171.0"}).areas["codex"]
    adds = [m for entry in base.versions[1:] for m in entry.union.get("adds", ())]
    assert len(adds) == 8 and base.version == "0.147.0" and newer.version == "0.171.0"
    for name in _entry("codex", "0.171.0").union["into"]:
        assert newer.vocabularies[name].values == base.vocabularies[name].values + tuple(adds), name
    assert newer.vocabularies["newer_variant"].values == tuple(
        v for v in base.vocabularies["newer_variant"].values if v not in adds
    )
    kept_newer = [r["variant"] for r in newer.tables["newer_variants"].rows]
    assert kept_newer == [r["variant"] for r in base.tables["newer_variants"].rows if r["variant"] not in adds]
    assert [r["variant"] for r in newer.tables["variants"].rows[len(base.tables["variants"].rows) :]] == adds
    [turn] = [r for r in newer.tables["stages"].rows if r["stage"] == "turn"]
    assert set(adds) <= set(turn["categories"])
    for name, table in base.tables.items():  # nothing else changed
        if name not in ("variants", "newer_variants", "stages", "http_status_forms", "outcome_vectors"):
            assert newer.tables[name] == table, name


def test_a_release_inside_a_range_is_its_range() -> None:
    inner, first = SPEC.at({"codex": "0.160.0"}).areas["codex"], SPEC.at({"codex": "0.159.0"}).areas["codex"]
    assert inner.version == "0.160.0" and inner.current is not None and inner.current.version == "0.159.0"
    assert (inner.vocabularies, inner.tables, inner.wire) == (first.vocabularies, first.tables, first.wire)
    assert "modelNotFound" not in inner.vocabularies["variant"].values
    assert "tooManyDenials" in inner.vocabularies["variant"].values


def test_spec_at_the_base_is_the_loaded_spec_and_uncovered_is_refused() -> None:
    assert SPEC.at({"codex": "0.147.0", "claude-code": "0.3.220"}).areas == SPEC.areas
    assert SPEC.at({"codex": "0.171.0"}).at({"codex": "0.147.0"}).areas["codex"] == SPEC.areas["codex"]
    with pytest.raises(KeyError, match=r"covered: 0\.147\.0–0\.148\.0-alpha\.8, 0\.148\.0–0\.150\.1, "):
        SPEC.at({"codex": "0.172.0"})


@pytest.mark.parametrize(
    ("release", "misalignment", "http_401"),
    [
        ("0.150.1", False, "other"),
        ("0.151.0", True, "other"),
        ("0.157.1", True, "other"),
        ("0.158.0", True, {"httpConnectionFailed": {"httpStatusCode": 401}}),
        ("0.160.0", True, {"httpConnectionFailed": {"httpStatusCode": 401}}),
        ("0.171.0", True, {"httpConnectionFailed": {"httpStatusCode": 401}}),
    ],
)
def test_the_wire_of_a_release_is_its_ranges_merged_over_the_earlier_ones(
    release: str, misalignment: bool, http_401: Any
) -> None:
    """misalignment: null from 0.151.0, the 401 as httpConnectionFailed from 0.158.0 (recorded at
    both boundaries: docs/measurements/2026-12-02/wire.md); every other failure as at the base."""
    base, wire = SPEC.areas["codex"].wire, SPEC.at({"codex": release}).areas["codex"].wire
    assert ("turn_error" in wire) is misalignment and "turn_error" not in base
    assert wire["failures"]["http-401"] == http_401
    assert {k: v for k, v in wire["failures"].items() if k != "http-401"} == {
        k: v for k, v in base["failures"].items() if k != "http-401"
    }


def test_the_claimed_version_reaches_the_provider_operations_as_product_version() -> None:
    seen: list[Any] = []

    class Target:
        @staticmethod
        def codex_outcome(request: Any) -> Any:
            seen.append(request)
            return {"stopReason": "completed", "output": [], "replies": []}

    declaration = {**DECLARATION, "providers": {"codex": "0.171.0"}}
    adapter = Adapter("versioned", declaration, Target(), SPEC)
    request = {"mode": "never", "thread_id": "thread-1", "events": []}
    adapter.call("codex_outcome", request)
    # ADP-014 asks a pure operation's first calls twice (determinism): each carries the version
    assert seen and all(r == {**request, "productVersion": "0.171.0"} for r in seen)


@pytest.mark.parametrize(
    ("version", "error"),
    [
        ("0.147.0", {"message": "m"}),
        ("0.150.1", {"message": "m"}),
        ("0.151.0", {"misalignment": None, "message": "m"}),
        ("0.171.0", {"misalignment": None, "message": "m"}),
    ],
)
def test_the_fake_app_server_speaks_the_version_wire(tmp_path: Path, version: str, error: dict[str, Any]) -> None:
    wire = SPEC.at({"codex": version}).areas["codex"].wire
    frame = {
        "method": "turn/completed",
        "params": {"threadId": "t", "turn": {"id": "u", "status": "failed", "error": {"message": "m"}}},
    }
    scenario = Scenario("codex", "wire", [], "", {}, [{"out": frame}, {"exit": 0}], [], {})
    argv = fake_argv("codex", write_script(scenario, tmp_path, None, wire))
    out = subprocess.run(argv, input=b"", capture_output=True, timeout=30, check=False).stdout.decode()
    [sent] = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert sent["params"]["turn"]["error"] == error


def test_the_diagnostic_schema_admits_every_shipped_versions_categories() -> None:
    """format_diagnostic's input schema names the Codex categories once for all shipped versions:
    exactly the union of vocabulary codex.category at each, so a new version cannot be half shipped."""
    spec = load_spec()
    area = spec.areas["codex"]
    union: list[str] = []
    for version in area.shipped:
        union += [c for c in spec.at({"codex": version}).vocabulary("codex.category").values if c not in union]
    schema = json.loads((spec.root / "schema" / "diagnostic.json").read_text(encoding="utf-8"))
    for name in ("cdx_failure", "cdx_result_facts", "cdx_failure_line_facts"):
        assert set(schema["$defs"][name]["properties"]["category"]["enum"]) == set(union), name


def test_a_mapping_that_does_not_know_the_claimed_release_is_told_so(run_suite: RunSuite) -> None:
    """At 0.160.0, a mapping written for 0.147.0 answers unknown for all four members 0.160.0's union
    adds: the failure (CDX-077, unchanged) says the mapping may not know 0.160.0. A mapping that
    knows them but also newer ones (maps as at 0.171.0) gets no such hint: it would be false."""
    hint = "the adapter's mapping may not know codex 0.160.0"
    runs = {
        module: run_suite(
            "-q",
            "--pyargs",
            "conformance.test_codex",
            "-k",
            "test_every_variant_status",
            impl=module,
            importable=[fixtures_dir() / "known_bad"],
            report=True,
        )
        for module in ("bad_cdx_in_between_maps_as_base", "bad_cdx_in_between_maps_as_newest")
    }
    base = runs["bad_cdx_in_between_maps_as_base"]
    assert base.code == 1 and base.violated() == ["CDX-077"], base.tail
    assert (
        hint in base.tail
        and "misalignmentPolicyViolation, rateLimitExceeded, flexUnavailable, tooManyDenials" in base.tail
    )
    assert "may not know" not in runs["bad_cdx_in_between_maps_as_newest"].tail
