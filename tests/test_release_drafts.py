"""Release day's drafts (issue #31 item 3). A draft carries every decision the spec already
took for the same wire fact in another range, with that range as evidence, so only new wire
facts stay open. Offline through the public CLI: the release's unions from a schema excerpt
(--from), its recordings (--recordings) the committed ones of a real release, relabelled as the
release's, edited where a test makes a fact no range has."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.products.recordings import load_recording, recording_file
from conformance.products.release import classifier
from conformance.products.release_wire import compare_recordings
from conformance.spec import load_spec, schema_validator
from conformance.spec.crosscheck import is_placeholder
from conformance.spec.model import ProductVersion
from conformance.spec.resources import fixtures_dir
from tests.test_release_day import _codex_schema
from tests.test_upgrade_gate import DATA

NEW = "quotaWarning"  # a member no range has: the union differs from both neighbours, so a draft is written


def _recordings(tmp_path: Path, release: str, of: str, edit: dict[str, tuple[str, str]] | None = None) -> Path:
    """The committed Codex recordings of ``of`` as ``release``'s, ``edit`` (case -> (old, new)
    text) applied: what `products record --version RELEASE --output DIR` would have written."""
    root = tmp_path / "recordings"
    folder = root / "codex" / release
    shutil.copytree(fixtures_dir() / "recordings" / "codex" / of, folder)
    for file in folder.glob("*.json"):
        text = file.read_text(encoding="utf-8").replace(f'"version": "{of}"', f'"version": "{release}"')
        old, new = (edit or {}).get(file.stem, ("", ""))
        assert old in text
        file.write_text(text.replace(old, new) if old else text, encoding="utf-8")
    return root


def _gate(tmp_path: Path, release: str, members: tuple[str, ...], recordings: Path) -> Path:
    source = _codex_schema(tmp_path, "0.147.0", *members, NEW)
    draft = tmp_path / "d.yaml"
    argv = ["upgrade-check", "--product", "codex", "--version", release, "--from", str(source)]
    assert main([*argv, "--recordings", str(recordings), "--draft", str(draft), "--json"]) == 1
    return draft


def _decision(draft: Any, about: str) -> Any:
    return next(d for d in draft["decisions"] if isinstance(d, dict) and d["about"] == about)


def _shipped_decision(version: str, about: str) -> Any:
    entries = yaml.safe_load((Path(__file__).parents[1] / "spec" / "codex.yaml").read_text(encoding="utf-8"))
    [entry] = [e for e in entries["versions"] if e["version"] == version]
    return next(d for d in entry["decisions"] if d["about"] == about)


@pytest.mark.requirement("REL-002")
@pytest.mark.parametrize(
    ("release", "members", "like", "about", "fact"),
    [
        (  # between 0.150.1 and 0.151.0, recorded as 0.151.0 writes: misalignment null on every turn error
            "0.150.2",
            ("misalignmentPolicyViolation", "rateLimitExceeded"),
            "0.151.0",
            "turn_error",
            {"turn_error": {"misalignment": None}},
        ),
        (  # between 0.157.1 and 0.158.0, recorded as 0.158.0 writes: the 401 as httpConnectionFailed
            "0.157.2",
            ("misalignmentPolicyViolation", "rateLimitExceeded", "flexUnavailable"),
            "0.158.0",
            "failures",
            {"failures": {"http-401": {"httpConnectionFailed": {"httpStatusCode": 401}}}},
        ),
    ],
    ids=["turn_error-from-0.151.0", "http-401-from-0.158.0"],
)
def test_a_wire_fact_another_range_decided_is_carried_with_that_range_as_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str, members: tuple[str, ...], like: str,
    about: str, fact: Any,
) -> None:  # fmt: skip
    draft_path = _gate(tmp_path, release, members, _recordings(tmp_path, release, like))
    report = json.loads(capsys.readouterr().out)
    validator = schema_validator(load_spec().root, "real-products")
    validator.evolve(schema={"$ref": "urn:subagent-conformance:spec:real-products#/$defs/upgrade_check"}).validate(
        report
    )
    assert f"wire.{about} (as {like} decided)" in report["carried"], report["carried"]
    assert not any(line.startswith("each wire difference") for line in report["decisions"]), report["decisions"]
    assert not any(line.startswith("wire.") for line in report["decisions"]), report["decisions"]
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    assert draft["wire"] == fact  # only what differs from the neighbour below; nothing open
    assert not any(is_placeholder(k) for k in draft["wire"])
    carried = _decision(draft, f"wire.{about}")
    shipped = _shipped_decision(like, f"wire.{about}")
    assert carried["decision"] == shipped["decision"]
    assert carried["sources"][: len(shipped["sources"])] == shipped["sources"]
    evidence = [s["product"] for s in carried["sources"][len(shipped["sources"]) :]]
    assert any(f"recordings of {release}" in e for e in evidence)
    assert any(f"spec entry {like} (range {like}" in e for e in evidence), evidence
    assert not any(
        isinstance(d, str) or (d["about"].startswith("wire.") and is_placeholder(d["decision"]))
        for d in draft["decisions"]
    )


@pytest.mark.requirement("REL-002")
def test_a_wire_fact_no_range_decided_stays_open_beside_the_carried_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recorded as 0.151.0 writes, except that the 400 comes back as httpConnectionFailed with its
    status, which no range records: turn_error is carried, failures.http-400 is left open."""
    edit = {
        "http-400": ('"codexErrorInfo": "other"', '"codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 400}}')
    }
    recordings = _recordings(tmp_path, "0.150.2", "0.151.0", edit)
    draft_path = _gate(tmp_path, "0.150.2", ("misalignmentPolicyViolation", "rateLimitExceeded"), recordings)
    report = json.loads(capsys.readouterr().out)
    assert "wire.turn_error (as 0.151.0 decided)" in report["carried"]
    assert not any(c.startswith("wire.failures") for c in report["carried"])
    [line] = [d for d in report["decisions"] if d.startswith("wire.")]
    assert line.startswith("wire.failures: 0.150.2 records failures.http-400 = ") and '"other"' in line
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    assert draft["wire"]["failures"] == {"http-400": {"httpConnectionFailed": {"httpStatusCode": 400}}}
    opened = _decision(draft, "wire.failures")
    assert is_placeholder(opened["decision"]) and is_placeholder(opened["sources"][-1])
    assert not is_placeholder(_decision(draft, "wire.turn_error")["decision"])


def test_without_recordings_the_wire_stays_one_open_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Offline with --from alone the wire is not checked: nothing is carried that no recording showed."""
    source = _codex_schema(tmp_path, "0.147.0", "misalignmentPolicyViolation", "rateLimitExceeded", NEW)
    draft = tmp_path / "d.yaml"
    argv = ["upgrade-check", "--product", "codex", "--version", "0.150.2", "--from", str(source), "--json"]
    assert main([*argv, "--draft", str(draft)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["wire"] == "not checked" and not any(c.startswith("wire.") for c in report["carried"])
    assert any(line.startswith("each wire difference") for line in report["decisions"])
    [entry] = yaml.safe_load(draft.read_text(encoding="utf-8"))
    assert all(is_placeholder(k) for k in entry["wire"])


# ---- a draft's product_version, in the form the shipped entries use


@pytest.mark.requirement("REL-002")
def test_an_online_draft_writes_product_version_as_the_shipped_entries_do(
    tmp_path: Path, fake_npm: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claude Code: the release installed (a fake npm) prints `2.1.400 (Claude Code)`; the draft's
    product_version is the shipped entries' `2.1.{patch}`, which gives the printed version back
    for the release, so a filled-in draft needs no edit there."""
    declarations = tmp_path / "sdk.d.ts"
    original = (DATA / "claude-agent-sdk-0.3.332.d.ts").read_text(encoding="utf-8")
    declarations.write_text(
        original.replace("'error_max_budget_usd' |", "'error_max_budget_usd' | 'error_startup_failure' |"),
        encoding="utf-8",
    )
    monkeypatch.setenv("FAKE_NPM_DTS", f"0.3.400={declarations}")
    monkeypatch.setenv("FAKE_NPM_PRINTS", "0.3.400=2.1.400 (Claude Code)")
    at = load_spec().at({"claude-code": "0.3.332"})

    def record_case(spec: Any, case: Any, installed: Any, folder: Path, timeout: float = 60.0) -> Any:
        path = recording_file("claude-code", "0.3.332", case.name, fixtures_dir() / "recordings")
        return {**load_recording(at, path), "version": installed.version}

    monkeypatch.setattr("conformance.products.recorder.record_case", record_case)
    argv = ["upgrade-check", "--product", "claude-code", "--version", "0.3.400", "--cache-dir", str(tmp_path / "c")]
    assert main([*argv, "--draft", str(tmp_path / "d.yaml")]) == 1
    capsys.readouterr()
    [draft] = yaml.safe_load((tmp_path / "d.yaml").read_text(encoding="utf-8"))
    forms = {e.product_version for e in load_spec().areas["claude-code"].versions}
    assert draft["product_version"] == "2.1.{patch}" and forms == {"2.1.{patch}"}
    entry = ProductVersion("0.3.400", product_version=draft["product_version"])
    assert entry.product_of("0.3.400") == "2.1.400"


# ---- the classification is spec data (table releases.facts), and the gate reads it


@pytest.mark.requirement("REL-001")
def test_the_gate_reads_its_classification_from_the_spec(tmp_path: Path) -> None:
    """A spec whose table releases.facts says a result's written_at is read: the same recordings
    then show a read change, which the shipped table says is not read."""
    shutil.copytree(load_spec().root, tmp_path / "spec")
    file = tmp_path / "spec" / "releases.yaml"
    text = file.read_text(encoding="utf-8")
    row = 'name: "result written_at", read: false'
    assert row in text
    file.write_text(text.replace(row, 'name: "result written_at", read: true'), encoding="utf-8")
    results = []
    for spec in (load_spec(), load_spec(tmp_path / "spec")):
        at = spec.at({"claude-code": "0.3.332"})
        old = load_recording(at, recording_file("claude-code", "0.3.332", "answer", fixtures_dir() / "recordings"))
        new = json.loads(json.dumps(old))
        for item in new["wire"]:
            for key in ("stdout", "message"):
                if isinstance(item.get(key), dict) and item[key].get("type") == "result":
                    item[key]["written_at"] = "2026-12-02T00:00:00Z"
        compared = compare_recordings(at, "claude-code", "answer", old, new, classifier(at))
        results.append({c["read"] for c in compared["changes"]})
    assert results == [{False}, {True}]


@pytest.mark.requirement("REL-002")
def test_a_claude_code_wire_fact_is_carried_from_the_range_that_decided_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SDK release inside the base range (0.3.230, never published) adding a result subtype,
    recorded as 0.3.332 writes: its start-up failure result (wire.startup_failure_results) is the
    fact range 0.3.274 decided, so its decision is carried; only the new subtype is left open."""
    release = "0.3.230"
    folder = tmp_path / "recordings" / "claude-code" / release
    shutil.copytree(fixtures_dir() / "recordings" / "claude-code" / "0.3.332", folder)
    for file in folder.glob("*.json"):
        text = file.read_text(encoding="utf-8")
        file.write_text(text.replace('"version": "0.3.332"', f'"version": "{release}"'), encoding="utf-8")
    declarations = tmp_path / "sdk.d.ts"
    original = (DATA / "claude-agent-sdk-0.3.332.d.ts").read_text(encoding="utf-8")
    declarations.write_text(
        original.replace("'error_max_budget_usd' |", "'error_max_budget_usd' | 'error_startup_failure' |"),
        encoding="utf-8",
    )
    draft_path = tmp_path / "d.yaml"
    argv = ["upgrade-check", "--product", "claude-code", "--version", release, "--from", str(declarations)]
    argv += ["--recordings", str(tmp_path / "recordings"), "--draft", str(draft_path), "--json"]
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    assert "wire.startup_failure_results (as 0.3.274 decided)" in report["carried"], report["carried"]
    assert not any(line.startswith("wire.") for line in report["decisions"]), report["decisions"]
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    shipped = next(e for e in load_spec().areas["claude-code"].versions if e.version == "0.3.274")
    assert draft["wire"] == shipped.wire
    carried = _decision(draft, "wire.startup_failure_results")
    assert carried["decision"] == shipped.decisions[0]["decision"]
    assert any("spec entry 0.3.274 (range 0.3.274" in s.get("product", "") for s in carried["sources"])
    assert is_placeholder(_decision(draft, "error_startup_failure")["decision"])


@pytest.mark.requirement("REL-001")
def test_recordings_given_offline_check_the_wire_of_an_equivalent_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A release whose unions are 0.151.0's, recorded as 0.151.0 writes: equivalent to 0.151.0,
    and FILE says the wire was checked, from the recordings given."""
    recordings = _recordings(tmp_path, "0.150.2", "0.151.0")
    source = _codex_schema(tmp_path, "0.147.0", "misalignmentPolicyViolation", "rateLimitExceeded")
    file = tmp_path / "versions.json"
    argv = ["upgrade-check", "--product", "codex", "--version", "0.150.2", "--from", str(source)]
    assert main([*argv, "--recordings", str(recordings), "--write-versions", str(file)]) == 0
    assert "EQUIVALENT: nothing the contract reads changed; 0.150.2 is tested as 0.151.0" in capsys.readouterr().out
    document = json.loads(file.read_text(encoding="utf-8"))
    schema_validator(load_spec().root, "product-versions").validate(document)
    [entry] = document["verified"]
    assert (entry["equivalent_to"], entry["wire"]) == ("0.151.0", "checked")
    assert f"its recordings read from {recordings}" in entry["evidence"]["source"]
    assert {c["case"] for c in entry["evidence"]["wire"]} >= {"http-401", "answer"}


@pytest.mark.requirement("REL-002")
def test_a_wire_fact_the_recordings_no_longer_show_is_left_to_the_maintainers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After 0.157.1 (range 0.151.0: misalignment null on every turn error), a release recorded as
    0.150.1 writes, without the field: the draft cannot say a fact went away, so it is a decision."""
    members = ("misalignmentPolicyViolation", "rateLimitExceeded")
    _gate(tmp_path, "0.157.2", members, _recordings(tmp_path, "0.157.2", "0.150.1"))
    report = json.loads(capsys.readouterr().out)
    [line] = [d for d in report["decisions"] if d.startswith("wire.")]
    assert line.startswith("wire.turn_error.misalignment: 0.157.1 has it (null), 0.157.2's recordings do not")


@pytest.mark.requirement("REL-001")
@pytest.mark.parametrize(
    ("row", "said"),
    [
        (
            '{product: codex, kind: union, name: TurnError, read: true, why: "a union the gate does not compare"}',
            "the gate compares no codex union 'TurnError'",
        ),
        (
            '{product: codex, kind: union, name: CodexErrorInfo, read: false, why: "the same union a second time"}',
            "a second row for codex union 'CodexErrorInfo'",
        ),
        ('{product: codex, kind: union, name: CodexErrorInfo, read: "yes", why: "not a boolean"}', "is not of type"),
    ],
    ids=["not-compared", "twice", "not-a-boolean"],
)
def test_check_spec_names_a_wrong_row_of_the_facts_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, said: str
) -> None:
    shutil.copytree(load_spec().root, tmp_path / "spec")
    for folder in ("scenarios", "recordings"):
        shutil.copytree(fixtures_dir() / folder, tmp_path / "fixtures" / folder)
    file = tmp_path / "spec" / "releases.yaml"
    text = file.read_text(encoding="utf-8")
    anchor = "    rows:\n"
    file.write_text(text.replace(anchor, f"{anchor}      - {row}\n", 1), encoding="utf-8")
    assert main(["--spec", str(tmp_path / "spec"), "check-spec"]) == 1
    err = capsys.readouterr().err
    assert "releases.yaml:" in err and said in err, err
