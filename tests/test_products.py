"""The real-products machinery without the network or the real products: the upgrade gate's
extraction and comparison on excerpts of the real artefacts (tests/data/upgrade/), the gate and
``products install`` end to end against a fake ``npm`` on PATH, the fake model services over
loopback HTTP, and the errors of a broken cases file."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.products.model_servers import BEHAVIOURS, ModelServer
from conformance.products.packages import MARKER, ProductError, install, locked
from conformance.products.recordings import load_cases
from conformance.products.upgrade import UnionError, claude_unions, codex_unions, compare
from conformance.spec import SpecError, load_spec, schema_validator

DATA = Path(__file__).parent / "data" / "upgrade"
SPEC = load_spec()


def _differences(unions: list[Any]) -> dict[str, tuple[list[str], list[str]]]:
    return {u["vocabulary"]: (u["added"], u["removed"]) for u in (compare(SPEC, union) for union in unions)}


# ---- extraction and comparison


def test_codex_locked_schema_equals_the_spec_vocabularies() -> None:
    assert _differences(codex_unions(DATA / "codex-0.147.0")) == {
        "codex.variant": ([], []),
        "codex.http_status_variant": ([], []),
    }


def test_codex_0171_adds_the_newer_variants_and_a_catch_all() -> None:
    """The added members are the newer variants the spec records as seen in a generated schema up to
    0.171.0 (each range's, by its first release), plus the catch-all member, reported with a note on anyOf."""
    unions = codex_unions(DATA / "codex-0.171.0")
    rows = SPEC.table("codex", "newer_variants").rows
    seen = [r["variant"] for r in rows if r["seen_in"].startswith("@openai/codex ")]
    [variant] = [compare(SPEC, u) for u in unions if u.vocabulary == "codex.variant"]
    catch_all = [m for m in variant["added"] if m.startswith("(catch-all")]
    assert sorted(set(variant["added"]) - set(catch_all)) == sorted(seen) and len(catch_all) == 1
    assert variant["removed"] == []
    assert any("anyOf" in note for note in variant["notes"])
    assert _differences(unions)["codex.http_status_variant"] == ([], [])


def test_claude_locked_and_newest_declarations_equal_the_spec() -> None:
    for version in ("0.3.220", "0.3.332"):
        unions = claude_unions((DATA / f"claude-agent-sdk-{version}.d.ts").read_text(encoding="utf-8"))
        assert _differences(unions) == {
            "claude-code.result_subtype": ([], []),
            "claude-code.error_subtype": ([], []),
        }, version


def test_claude_changed_subtypes_are_added_and_removed() -> None:
    text = (DATA / "claude-agent-sdk-0.3.220.d.ts").read_text(encoding="utf-8")
    changed = text.replace("'error_max_budget_usd' |", "'error_startup_failure' |")
    differences = _differences(claude_unions(changed))
    assert differences["claude-code.error_subtype"] == (["error_startup_failure"], ["error_max_budget_usd"])
    assert differences["claude-code.result_subtype"] == (["error_startup_failure"], ["error_max_budget_usd"])


def test_multiline_interface_and_comments_are_read() -> None:
    declarations = """
    /** the union */
    export declare type SDKResultMessage = A | SDKResultError;
    export interface A { type: 'result'; /* subtype: 'no' */ subtype: "success"; nested: { subtype: 'inner' }; }
    export declare type SDKResultError = {
        readonly subtype?:
            | 'error_a'
            | 'error_b';
        other: Record<string, { a: number; }>;
    };
    """
    [results, errors] = claude_unions(declarations)
    assert results.members == ["success", "error_a", "error_b"] and errors.members == ["error_a", "error_b"]


@pytest.mark.parametrize(
    ("declarations", "message"),
    [
        ("type Other = 1;", "declares no type SDKResultMessage"),
        ("type SDKResultMessage = { a: 1 };", "not type names"),
        (
            "type SDKResultMessage = X | SDKResultError; type X = { subtype: string; }; type SDKResultError = {};",
            "X.subtype: 'string' is not a string literal",
        ),
        ("type SDKResultMessage = X; type X = { subtype: 'success'; };", "no longer has the member SDKResultError"),
    ],
)
def test_claude_declarations_the_gate_cannot_read_are_errors(declarations: str, message: str) -> None:
    with pytest.raises(UnionError, match=re.escape(message)):
        claude_unions(declarations)


def test_codex_schema_without_the_union_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "ErrorNotification.json").write_text('{"definitions": {}}', encoding="utf-8")
    with pytest.raises(UnionError, match=r"no definitions\.CodexErrorInfo"):
        codex_unions(tmp_path)
    with pytest.raises(UnionError, match="cannot read"):
        codex_unions(tmp_path / "missing")


# ---- install and the gate end to end, against a fake npm


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_install_is_idempotent_and_locates_the_binary(fake_npm: Path, tmp_path: Path) -> None:
    package, version = locked(SPEC, "codex")
    first, ran = install("codex", package, version, tmp_path / "cache")
    assert ran and first.binary.is_file() and first.product_version == f"fake {version}"
    assert first.folder == tmp_path / "cache" / f"{package}@{version}" and (first.folder / MARKER).is_file()
    again, ran_again = install("codex", package, version, tmp_path / "cache")
    assert not ran_again and again == first
    assert [c[:2] for c in _calls(fake_npm)] == [["install", f"{package}@{version}"]]  # npm ran once
    assert {"--ignore-scripts", "--no-save"} <= set(_calls(fake_npm)[0])
    assert not list((tmp_path / "cache" / package).parent.glob("**/.staging-*"))


def test_products_install_command_installs_every_shipped_version(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --version, every shipped version of both products (the real tier runs the claimed
    one; CI runs each); with --product and --version, that one only."""
    from conformance.products.packages import product_version, shipped_versions

    wanted = sorted(
        "@".join(product_version(SPEC, name, version))
        for name in ("codex", "claude-code")
        for version in shipped_versions(SPEC, name)
    )
    assert len(wanted) >= 4
    assert main(["products", "install", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert sorted(c[1] for c in _calls(fake_npm)) == wanted
    assert main(["products", "install", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert len(_calls(fake_npm)) == len(wanted) and capsys.readouterr().out.count("already installed") == len(wanted)
    newest = shipped_versions(SPEC, "codex")[-1]
    argv = ["products", "install", "--product", "codex", "--version", newest, "--cache-dir", str(tmp_path / "other")]
    assert main(argv) == 0
    installs = [c[1] for c in _calls(fake_npm)[len(wanted) :] if c[0] == "install"]
    assert installs == [f"@openai/codex@{newest}"]  # after `npm view` (offline here: not checked)


def test_failed_npm_install_is_a_clear_error(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    assert main(["products", "install", "--product", "codex", "--cache-dir", str(tmp_path / "cache")]) == 2
    err = capsys.readouterr().err
    assert "npm install @openai/codex@" in err and "404 Not Found" in err
    assert not (tmp_path / "cache" / "@openai").exists() or not any((tmp_path / "cache" / "@openai").iterdir())


def test_missing_npm_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProductError, match="npm is not on PATH"):
        install("codex", *locked(SPEC, "codex"), tmp_path / "cache")


@pytest.mark.parametrize(
    ("product", "version", "status"),
    [("codex", "0.147.0", 0), ("codex", "0.171.0", 0), ("claude-code", "0.3.220", 0), ("claude-code", "0.3.332", 0)],
)
def test_upgrade_check_exit_status_and_json(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], product: str, version: str, status: int
) -> None:
    """The gate installs the version (the fake npm) and reads its union from the installed
    product; each shipped version agrees with its entry (tests/test_upgrade_gate.py: the rest)."""
    argv = ["upgrade-check", "--product", product, "--version", version, "--cache-dir", str(tmp_path / "cache")]
    assert main([*argv, "--json"]) == status
    report = json.loads(capsys.readouterr().out)
    validator = schema_validator(SPEC.root, "real-products").evolve(
        schema={"$ref": "urn:subagent-conformance:spec:real-products#/$defs/upgrade_check"}
    )
    validator.validate(report)
    assert report["equal"] is (status == 0) and report["version"] == version and report["shipped"] is True
    assert report["nearest"] == version and report["shipped"]  # a covered release, inside its range
    assert main(argv) == status  # the human form, from the cache this time
    text = capsys.readouterr().out
    assert ("SHIPPED:" if status == 0 else "DIFFERS") in text
    for union in report["unions"]:
        assert all(f"  + {m}" in text for m in union["added"]) and all(f"  - {m}" in text for m in union["removed"])


def test_upgrade_check_usage_errors_exit_2(fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(tmp_path / "cache")
    assert main(["upgrade-check", "--product", "codex", "--version", "not a version!", "--cache-dir", cache]) == 2
    assert "neither an exact version" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["upgrade-check", "--product", "gemini", "--version", "1.0.0"])
    assert usage.value.code == 2


# ---- the fake model services


def _post(url: str, body: Any) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _events(body: str) -> list[tuple[str, Any]]:
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
@pytest.mark.parametrize("behaviour", [b for b in BEHAVIOURS if b != "stream-stalled"])
def test_model_service_behaviours(api: str, behaviour: str) -> None:
    path = "/v1/responses" if api == "openai-responses" else "/v1/messages?beta=true"
    final = "response.completed" if api == "openai-responses" else "message_stop"
    with ModelServer(api, behaviour, {"text": "hi there", "file_path": "/work/hello.txt"}) as server:
        status, body = _post(server.origin + path, {"model": "m", "stream": True})
        missing, _ = _post(server.origin + "/v1/other", {})
        assert [(r.method, r.path) for r in server.requests] == [("POST", path), ("POST", "/v1/other")]
        assert len(server.model_calls()) == 1 and missing == 404
    if behaviour.startswith("http-"):
        assert status == int(behaviour.removeprefix("http-")) and "error" in json.loads(body)
        return
    events = _events(body)
    assert status == 200 and all(payload["type"] == name for name, payload in events)
    names = [name for name, _ in events]
    assert (final in names) is (behaviour != "stream-cut")
    if behaviour in ("answer", "stream-cut"):
        assert "hi there" in body
    else:
        assert "/work/hello.txt" in body and ("tool_use" in body or "function_call" in body)


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_a_stalled_stream_stays_open_and_silent_until_the_server_stops(api: str) -> None:
    """stream-stalled sends the start of the stream and its text delta, then nothing: no final
    event and no close, until the server stops (the product's idle timeout ends it in a real run)."""
    import http.client

    path = "/v1/responses" if api == "openai-responses" else "/v1/messages"
    final = b"response.completed" if api == "openai-responses" else b"message_stop"
    server = ModelServer(api, "stream-stalled", {"text": "hi there"}).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        connection.request("POST", path, json.dumps({"model": "m", "stream": True}))
        answer = connection.getresponse()
        seen = b""
        while b"hi there" not in seen:  # up to the delta, line by line (the stream stays open)
            line = answer.fp.readline()
            assert line, "the stream closed before its text delta"
            seen += line
        assert answer.status == 200 and final not in seen
    finally:
        server.stop()
    rest = answer.read()  # the stop released the stall: the stream ends, still without the final event
    assert final not in rest
    connection.close()


def test_schema_and_servers_know_the_same_behaviours() -> None:
    schema = json.loads((SPEC.root / "schema" / "real-products.json").read_text(encoding="utf-8"))
    assert schema["$defs"]["case"]["properties"]["model"]["properties"]["behaviour"]["enum"] == list(BEHAVIOURS)


# ---- the cases file


def test_bad_cases_name_file_line_and_field(tmp_path: Path) -> None:
    from conformance.products.recordings import cases_file

    text = cases_file().read_text(encoding="utf-8")
    broken = (
        text.replace("covers: [CDX-075, CDX-002]", "covers: [CDX-975]")
        .replace("category: internalServerError}", "category: notAVariant}", 1)
        .replace(
            "expect: {stopReason: error, failure: {stage: query-run, category: error_max_turns}}",
            "expect: {stopReason: completed, failure: {stage: query-run, category: error_max_turns}}",
        )
        .replace("mode: bypassPermissions", "mode: yolo")
    )
    file = tmp_path / "cases.yaml"
    file.write_text(broken, encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_cases(SPEC, file)
    problems = {(p.line, p.field): p.message for p in raised.value.problems}
    lines = broken.splitlines()
    assert any("unknown requirement CDX-975" in m and "CDX-975" in lines[line - 1] for (line, _), m in problems.items())
    assert any("notAVariant" in m and field.endswith("expect.failure") for (_, field), m in problems.items())
    assert any("stop reason" in m and field.endswith("expect.stopReason") for (_, field), m in problems.items())
    assert any(
        "'yolo' is not in vocabulary claude-code.permission_mode" in m and "yolo" in lines[line - 1]
        for (line, _), m in problems.items()
    )
    assert all(str(file) in str(p) for p in raised.value.problems)


# Every case has a recording of every shipped version, and every recording a case:
# tests/test_recordings_per_version.py.


def test_malformed_cases_are_schema_errors(tmp_path: Path) -> None:
    file = tmp_path / "cases.yaml"
    file.write_text("products:\n  codex: {args: [], mode: never, task: t, cases: []}\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"cases\.yaml:2"):
        load_cases(SPEC, file)


def test_a_case_of_the_product_as_root_is_recorded_only_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bypassPermissions as root is what the case records; recorded as another user, the CLI would
    run normally and the transcript would claim the wrong thing, so the recorder refuses first."""
    from conformance.products import recorder
    from conformance.products.packages import Installed

    case = next(c for c in load_cases(SPEC) if c.as_root)
    assert case.mode == "bypassPermissions" and case.model_calls == 0
    monkeypatch.setattr(recorder, "running_as_root", lambda: False)
    nowhere = Installed(case.product, "pkg", "0", tmp_path, tmp_path / "no-binary", "0")
    with pytest.raises(recorder.RecordingError, match=r"cases\.yaml:\d+\) records what the product does as root"):
        recorder.record_case(SPEC, case, nowhere, tmp_path / "run")
    assert not (tmp_path / "run").exists()
