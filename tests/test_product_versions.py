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

SPEC = load_spec()
DECLARATION: dict[str, Any] = {"protocol": "1", "bindings": [], "process_drivers": []}


def _entry(product: str, version: str) -> Any:
    return next(v for v in SPEC.areas[product].versions if v.version == version)


@pytest.mark.requirement("ADP-004")
@pytest.mark.parametrize(
    ("product", "version"), [("codex", "0.172.0"), ("codex", "0.146.9"), ("claude-code", "2.1.220")]
)
def test_an_unshipped_version_is_one_usage_error_naming_the_shipped_ones_and_the_gate(
    product: str, version: str
) -> None:
    with pytest.raises(AdapterUsageError) as caught:
        check_declaration({**DECLARATION, "providers": {product: version}}, SPEC)
    message = str(caught.value)
    assert caught.value.condition == "unshipped-provider-version"
    assert all(v in message for v in SPEC.areas[product].shipped), message
    assert f"subagent-conformance upgrade-check --product {product} --version {version}" in message


@pytest.mark.requirement("ADP-004")
@pytest.mark.parametrize("product", ["codex", "claude-code"])
def test_every_shipped_version_is_accepted(product: str) -> None:
    for version in SPEC.areas[product].shipped:
        check_declaration({**DECLARATION, "providers": {product: version}}, SPEC)  # raises if refused


def test_spec_at_moves_exactly_the_members_the_version_adds() -> None:
    base, newer = SPEC.areas["codex"], SPEC.at({"codex": "0.171.0"}).areas["codex"]
    adds = list(_entry("codex", "0.171.0").union["adds"])
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


def test_spec_at_the_base_is_the_loaded_spec_and_unshipped_is_refused() -> None:
    assert SPEC.at({"codex": "0.147.0", "claude-code": "0.3.220"}).areas == SPEC.areas
    assert SPEC.at({"codex": "0.171.0"}).at({"codex": "0.147.0"}).areas["codex"] == SPEC.areas["codex"]
    with pytest.raises(KeyError, match=r"shipped: 0\.147\.0, 0\.171\.0"):
        SPEC.at({"codex": "0.172.0"})


def test_the_wire_of_a_version_merges_over_the_earlier_ones() -> None:
    base, newer = SPEC.areas["codex"].wire, SPEC.at({"codex": "0.171.0"}).areas["codex"].wire
    assert base["failures"]["http-401"] == "other" and "turn_error" not in base
    assert newer["failures"]["http-401"] == {"httpConnectionFailed": {"httpStatusCode": 401}}
    assert newer["turn_error"] == {"misalignment": None}
    assert {k: v for k, v in newer["failures"].items() if k != "http-401"} == {
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
    assert seen == [{**request, "productVersion": "0.171.0"}]


@pytest.mark.parametrize(
    ("version", "error"), [("0.147.0", {"message": "m"}), ("0.171.0", {"misalignment": None, "message": "m"})]
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
