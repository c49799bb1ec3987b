"""Release day (issue #31): a release the spec does not cover gets a verdict without a suite
release. `upgrade-check --write-versions FILE` compares it with both covered neighbours and, when
nothing the contract reads changed, records it; `pytest --product-versions=FILE` then tests a claim
of it exactly as the neighbour. A release that changes something is refused, each change named and
classified, with a draft that carries the decisions the spec already took. Offline throughout: the
unions come from excerpts of the real artefacts (tests/data/upgrade/) and fabrications of them."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.products.draft import is_placeholder
from conformance.products.recordings import load_recording, recording_file
from conformance.spec import load_spec, schema_validator
from conformance.spec.releases import covered_neighbours
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite
from tests.test_upgrade_gate import DATA, _entries, _spec_without

SPEC = load_spec()
CLAUDE_DTS = DATA / "claude-agent-sdk-0.3.332.d.ts"
RELEASE = "0.3.400"  # a Claude Agent SDK release past every one the spec covers, its unions 0.3.332's
NEIGHBOUR = "0.3.334"  # the covered release below it: the end of the range 0.3.274-0.3.334, recorded at 0.3.332


def _gate(*args: str) -> list[str]:
    return ["upgrade-check", *args]


def _codex_schema(tmp_path: Path, base: str, *strings: str) -> Path:
    """A copy of a committed CodexErrorInfo schema with string members added."""
    schema = tmp_path / f"schema-{base}-{'-'.join(strings) or 'same'}"
    shutil.copytree(DATA / f"codex-{base}", schema)
    file = schema / "v2" / "ErrorNotification.json"
    document = json.loads(file.read_text(encoding="utf-8"))
    info = document["definitions"]["CodexErrorInfo"]
    members = info.get("oneOf") or info["anyOf"]
    members[:0] = [{"type": "string", "enum": [name]} for name in strings]
    file.write_text(json.dumps(document), encoding="utf-8")
    return schema


def _wrapper(folder: Path, release: str, neighbour: str) -> str:
    """A provider pinned at ``release`` whose own tables map it as ``neighbour`` (its unions are
    equal): the reference's operations, the claimed release read as the neighbour."""
    name = f"at_{release.replace('.', '_')}"
    (folder / f"{name}.py").write_text(
        "import functools\nimport reference_impl\n"
        f"RELEASE, AS = {release!r}, {neighbour!r}\n"
        "def _mapped(operation):\n"
        "    @functools.wraps(operation)\n"
        "    def call(*args, **kwargs):\n"
        "        if args and isinstance(args[0], dict) and args[0].get('productVersion') == RELEASE:\n"
        "            args = ({**args[0], 'productVersion': AS}, *args[1:])\n"
        "        return operation(*args, **kwargs)\n"
        "    return call\n"
        "for _name in reference_impl.__all__:\n"
        "    _value = getattr(reference_impl, _name)\n"
        "    globals()[_name] = _mapped(_value) if callable(_value) else _value\n"
        "CONFORMANCE = {**reference_impl.CONFORMANCE,\n"
        "               'providers': {**reference_impl.CONFORMANCE['providers'], 'claude-code': RELEASE}}\n",
        encoding="utf-8",
    )
    return name


def test_the_release_is_past_what_the_spec_covers() -> None:
    below, above = covered_neighbours(SPEC.areas["claude-code"], RELEASE)
    assert below is not None and above is None


# ---- an equal release: exit 0, FILE written


@pytest.mark.requirement("REL-001")
@pytest.mark.parametrize(
    ("product", "version", "source", "neighbour"),
    [
        ("claude-code", RELEASE, CLAUDE_DTS, NEIGHBOUR),
        ("codex", "0.172.0", DATA / "codex-0.171.0", "0.171.0"),
    ],
)
def test_a_release_equal_to_its_neighbour_exits_0_and_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], product: str, version: str, source: Path, neighbour: str
) -> None:
    file = tmp_path / "versions.json"
    argv = _gate("--product", product, "--version", version, "--from", str(source), "--write-versions", str(file))
    assert main([*argv, "--draft", str(tmp_path / "d.yaml")]) == 0
    text = capsys.readouterr().out
    assert f"EQUIVALENT: nothing the contract reads changed; {version} is tested as {neighbour}" in text
    assert f"--product-versions={file}" in text and not (tmp_path / "d.yaml").exists()
    document = json.loads(file.read_text(encoding="utf-8"))
    schema_validator(SPEC.root, "product-versions").validate(document)
    [entry] = document["verified"]
    assert (entry["product"], entry["version"], entry["equivalent_to"]) == (product, version, neighbour)
    assert (entry["unions"], entry["wire"]) == ("equal", "not checked")
    assert entry["evidence"]["neighbours"] == {neighbour: "equal"} and entry["evidence"]["source"] == f"--from {source}"


def test_one_file_carries_the_releases_of_both_products(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "versions.json"
    for product, version, source in (
        ("claude-code", RELEASE, CLAUDE_DTS),
        ("codex", "0.172.0", DATA / "codex-0.171.0"),
    ):
        for _ in range(2):  # again: replaced, not repeated
            argv = _gate("--product", product, "--version", version, "--from", str(source))
            assert main([*argv, "--write-versions", str(file)]) == 0
    capsys.readouterr()
    verified = json.loads(file.read_text(encoding="utf-8"))["verified"]
    assert sorted((e["product"], e["version"]) for e in verified) == [("claude-code", RELEASE), ("codex", "0.172.0")]


# ---- the run given FILE, and without it


@pytest.fixture
def versions_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    file = tmp_path / "versions.json"
    argv = _gate("--product", "claude-code", "--version", RELEASE, "--from", str(CLAUDE_DTS))
    assert main([*argv, "--write-versions", str(file)]) == 0
    capsys.readouterr()
    return file


def test_a_run_given_the_file_passes_a_correct_provider_at_that_release(
    tmp_path: Path, run_suite: RunSuite, versions_file: Path
) -> None:
    """The reference, pinned at the release and mapping it as its tables say, passes the Claude
    Code tier under its neighbour 0.3.334's contract; the report, the summary, JUnit and the
    header say how the release was verified."""
    impl = _wrapper(tmp_path, RELEASE, NEIGHBOUR)
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    run = run_suite(
        "-q", "--pyargs", "conformance.test_claude_code", f"--product-versions={versions_file}",
        f"--conformance-summary={summary}", f"--junitxml={junit}",
        impl=impl, importable=[tmp_path], report=True,
    )  # fmt: skip
    assert run.code == 0 and not run.violated(), run.tail
    line = f"claude-code {RELEASE}: verified by upgrade-check on "
    said = f"as equivalent to {NEIGHBOUR} (unions equal; wire not checked)"
    [verified] = run.report["run"]["verified_versions"]
    assert verified.startswith(line) and verified.endswith(said)
    schema_validator(SPEC.root, "report").validate(run.report)
    assert f"Release {verified}." in summary.read_text(encoding="utf-8")
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert properties["verified_product_versions"] == verified
    assert f"@{RELEASE}, tested as {NEIGHBOUR}" in properties["product_versions"]
    report = tmp_path / "report.json"
    report.write_text(json.dumps(run.report), encoding="utf-8")
    assert main(["matrix", str(report), "--markdown", str(tmp_path / "m.md")]) == 0
    assert verified in (tmp_path / "m.md").read_text(encoding="utf-8")


def test_without_the_file_the_claim_is_one_usage_error_giving_the_gate_command(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    impl = _wrapper(tmp_path, RELEASE, "0.3.332")
    run = run_suite("-q", "--pyargs", "conformance.test_claude_code", impl=impl, importable=[tmp_path])
    assert run.code == 4, run.tail
    command = f"subagent-conformance upgrade-check --product claude-code --version {RELEASE} --write-versions "
    assert command in run.output and "--product-versions=" in run.output


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda e: e.update(equivalent_to="0.3.220"), "verified/0/equivalent_to: claude-code 0.3.400 may be"),
        (lambda e: e.pop("date"), "verified/0: 'date' is a required property"),
        (lambda e: e.update(unions="differ"), "verified/0/unions: 'equal' was expected"),
        (lambda e: e.update(expect={"stopReason": "completed"}), "Additional properties are not allowed"),
    ],
    ids=["not-a-neighbour", "no-date", "unions-not-equal", "an-expectation"],
)
def test_a_file_that_is_not_what_the_gate_wrote_is_a_usage_error_naming_the_field(
    tmp_path: Path, run_suite: RunSuite, versions_file: Path, change: Any, said: str
) -> None:
    """A file maps a release to a covered neighbour, no other: it cannot widen the contract."""
    document = json.loads(versions_file.read_text(encoding="utf-8"))
    change(document["verified"][0])
    versions_file.write_text(json.dumps(document), encoding="utf-8")
    impl = _wrapper(tmp_path, RELEASE, "0.3.332")
    run = run_suite(
        "-q", "--pyargs", "conformance.test_claude_code", f"--product-versions={versions_file}",
        impl=impl, importable=[tmp_path],
    )  # fmt: skip
    assert run.code == 4 and f"--product-versions={versions_file}" in run.output and said in run.output, run.tail


# ---- a release that changes something


def _open_members(draft: Any) -> set[str]:
    """The members whose decisions the draft leaves open: rows, doc lines, decisions."""
    rows = [r for table in draft.get("rows", {}).values() if isinstance(table, list) for r in table]
    opened = {r["variant"] for r in rows if any(is_placeholder(v) for v in r.values())}
    opened |= {m for m, line in draft["union"].get("docs", {}).items() if is_placeholder(line)}
    return opened | {d["about"] for d in draft["decisions"] if isinstance(d, dict) and is_placeholder(d["decision"])}


@pytest.mark.requirement("REL-001")
def test_a_release_adding_one_string_member_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file, draft_path = tmp_path / "versions.json", tmp_path / "d.yaml"
    source = _codex_schema(tmp_path, "0.171.0", "quotaWarning")
    argv = _gate("--product", "codex", "--version", "0.172.0", "--from", str(source), "--write-versions", str(file))
    assert main([*argv, "--draft", str(draft_path)]) == 1
    text = capsys.readouterr().out
    assert "READ: CodexErrorInfo: added quotaWarning" in text and "CHANGED" in text and not file.exists()
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    assert draft["union"]["adds"] == ["quotaWarning"] and _open_members(draft) == {"quotaWarning"}


@pytest.mark.requirement("REL-002")
def test_the_draft_carries_the_decisions_another_entry_took(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A release between the covered 0.169.1 and 0.171.0 (0.170.0, never released) adding, over
    0.169.1, bioPolicy (which 0.171.0's entry decided) and a member no entry has: the draft is a
    delta over 0.169.1 and only the new member is left open."""
    draft_path = tmp_path / "d.yaml"
    source = _codex_schema(tmp_path, "0.171.0", "quotaWarning")
    argv = _gate("--product", "codex", "--version", "0.170.0", "--from", str(source), "--json")
    assert main([*argv, "--draft", str(draft_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["covered_neighbours"] == ["0.169.1", "0.171.0"] and report["equivalent_to"] is None
    assert report["nearest"] == "0.169.1" and report["carried"] == ["bioPolicy (as 0.171.0 decided)"]
    assert not any(line.startswith("bioPolicy:") for line in report["decisions"])
    assert any(line.startswith("quotaWarning:") for line in report["decisions"])
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    assert sorted(draft["union"]["adds"]) == ["bioPolicy", "quotaWarning"] and _open_members(draft) == {"quotaWarning"}
    [newer] = [e for e in _entries(SPEC.root, "codex") if e["version"] == "0.171.0"]
    [row] = [r for r in draft["rows"]["variants"] if r["variant"] == "bioPolicy"]
    assert row == next(r for r in newer["rows"]["variants"] if r["variant"] == "bioPolicy")
    assert draft["union"]["docs"]["bioPolicy"] == newer["union"]["docs"]["bioPolicy"]
    decided = next(d for d in newer["decisions"] if d["about"] == "bioPolicy")
    assert next(d for d in draft["decisions"] if isinstance(d, dict) and d["about"] == "bioPolicy") == decided


def test_the_gates_unfilled_draft_in_a_spec_makes_check_spec_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Known-bad spec: the draft pasted as written into a copied spec dir; check-spec --spec DIR
    names each placeholder it still holds."""
    spec_root = _spec_without(tmp_path, "codex", "0.171.0")
    draft_path = tmp_path / "d.yaml"
    argv = ["--spec", str(spec_root), *_gate("--product", "codex", "--version", "0.171.0")]
    assert main([*argv, "--from", str(DATA / "codex-0.171.0"), "--draft", str(draft_path)]) == 1
    file = spec_root / "codex.yaml"
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    data["versions"] += yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    file.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    capsys.readouterr()
    assert main(["--spec", str(spec_root), "check-spec"]) == 1
    problems = capsys.readouterr().err.splitlines()[1:]
    assert problems and all(p.strip().startswith("codex.yaml:") and "TODO: " in p for p in problems), problems


# ---- check-spec reads the fixtures beside the spec it is given


def test_check_spec_reads_the_fixtures_beside_the_spec_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(SPEC.root, tmp_path / "spec")
    for folder in ("scenarios", "recordings"):
        shutil.copytree(fixtures_dir() / folder, tmp_path / "fixtures" / folder)
    assert main(["--spec", str(tmp_path / "spec"), "check-spec"]) == 0
    assert f"from {tmp_path / 'fixtures'}" in capsys.readouterr().out
    script = tmp_path / "fixtures" / "scenarios" / "codex.yaml"
    text = script.read_text(encoding="utf-8")
    script.write_text(
        text.replace("  - name: completed-answer\n", "  - name: completed-answer\n    sleep_first: 3\n", 1),
        encoding="utf-8",
    )
    assert main(["--spec", str(tmp_path / "spec"), "check-spec"]) == 1
    err = capsys.readouterr().err
    assert f"{script}:" in err and "'sleep_first' was unexpected" in err, err


# ---- online: the release installed (a fake npm) and its cases recorded (their recordings stood in for)


@pytest.mark.requirement("REL-001")
@pytest.mark.parametrize(
    ("edit", "status", "wire"),
    [
        (
            lambda m: m.update(written_at="2026-12-02T00:00:00Z"),
            0,
            "not read: answer: result message added field written_at",
        ),
        (lambda m: m.update(subtype="error_during_execution", is_error=True), 1, "READ: answer: the contract reads"),
    ],
    ids=["written_at-is-not-read", "a-changed-result-is-read"],
)
def test_online_each_case_is_recorded_and_read_beside_the_neighbours_recording(
    tmp_path: Path,
    fake_npm: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    status: int,
    wire: str,
) -> None:
    """The release is installed and every case recorded at it (the recorder stood in for by the
    neighbour's recording, edited as the release would write it): a field the contract does not
    read leaves it equivalent, with the wire checked; a different reading refuses it."""
    # the release and its neighbour 0.3.334 ship 0.3.332's excerpt (the range is constant in what is read)
    monkeypatch.setenv("FAKE_NPM_SAME_AS", f"{RELEASE}=0.3.332,{NEIGHBOUR}=0.3.332")
    at = SPEC.at({"claude-code": "0.3.332"})
    recorded: list[str] = []

    def record_case(spec: Any, case: Any, installed: Any, folder: Path, timeout: float = 60.0) -> Any:
        recorded.append(case.name)
        path = recording_file("claude-code", "0.3.332", case.name, fixtures_dir() / "recordings")
        recording = json.loads(json.dumps(load_recording(at, path)))
        for item in recording["wire"]:
            for key in ("stdout", "message"):  # the CLI's frame and what query() yielded for it
                if case.name == "answer" and isinstance(item.get(key), dict) and item[key].get("type") == "result":
                    edit(item[key])
        return {**recording, "version": installed.version}

    monkeypatch.setattr("conformance.products.recorder.record_case", record_case)
    file = tmp_path / "versions.json"
    argv = _gate("--product", "claude-code", "--version", RELEASE, "--cache-dir", str(tmp_path / "cache"))
    assert main([*argv, "--write-versions", str(file), "--draft", str(tmp_path / "d.yaml")]) == status
    text = capsys.readouterr().out
    assert wire in text, text
    assert "answer" in recorded and "wire: not checked" not in text
    if status == 0:
        [entry] = json.loads(file.read_text(encoding="utf-8"))["verified"]
        assert entry["wire"] == "checked" and entry["evidence"]["wire"] and entry["equivalent_to"] == NEIGHBOUR
        # the neighbour's recordings are its range's, kept at the range's recorded release
        beside = [Path(c["neighbour_recording"]) for c in entry["evidence"]["wire"] if "neighbour_recording" in c]
        assert beside and all(p.parent.name == "0.3.332" for p in beside), beside
    else:
        assert not file.exists() and (tmp_path / "d.yaml").exists()
