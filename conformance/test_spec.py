"""Tier 1, spec sanity: the contract data is well-formed, complete and closed.

These run before any adapter is consulted: a suite built on a broken spec proves nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from conformance.areas.diagnostic.grammar import roots
from conformance.harness.validation import check_schemas
from conformance.products.recordings import load_recording, recordings_dir
from conformance.spec import Spec, expand_text, load_spec, schema_validator
from conformance.spec.seeds import seed_statements

Json = dict[str, Any]

# These tests call no operation (conformance/verdict/operations.py).
OPERATIONS: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec()


def test_every_file_loads_and_validates(spec: Spec) -> None:
    # load_spec validates each area against schema/<area>.json and cross-checks them;
    # it raises naming every problem, so reaching here means all of it holds.
    assert list(spec.areas) == [
        "selection",
        "results",
        "background",
        "diagnostic",
        "claude-code",
        "codex",
        "redaction",
        "adapter-protocol",
        "releases",
    ]


def test_schemas_are_valid_draft_2020_12(spec: Spec) -> None:
    check_schemas(spec.root / "schema")  # raises SchemaError naming the file when one is malformed


def test_requirement_ids_are_unique_and_prefixed(spec: Spec) -> None:
    counts = Counter(req.id for req in spec.requirements())
    assert [rid for rid, n in counts.items() if n > 1] == []
    for area in spec.areas.values():
        assert all(req.id.startswith(area.id_prefix + "-") for req in area.requirements), area.name


def test_every_requirement_has_a_source_and_every_exclusion_a_reason(spec: Spec) -> None:
    for req in spec.requirements():
        assert req.sources, req.id
        assert req.excluded is None or len(req.excluded.split()) >= 3, req.id


def _values(spec: Spec, ref: str) -> list[Any]:
    return list(spec.vocabulary(ref).values)


@pytest.mark.parametrize(
    ("version", "counts"),
    [("0.147.0", (11, 5)), ("0.150.1", (12, 5)), ("0.160.0", (15, 5)), ("0.165.0", (16, 5)), ("0.171.0", (19, 5))],
)
def test_codex_union_at_each_shipped_version(spec: Spec, version: str, counts: tuple[int, int]) -> None:
    """The base's sixteen, and each later range's one more string (eight by 0.171.0), each mapped by
    one row of table variants, at a range's first, inner or last release."""
    spec = spec.at({"codex": version})
    strings = _values(spec, "codex.variant_string")
    objects = _values(spec, "codex.variant_object")
    assert (len(strings), len(objects)) == counts
    assert not set(strings + objects) & set(_values(spec, "codex.newer_variant"))
    assert sorted(_values(spec, "codex.variant")) == sorted(strings + objects)
    with_status = _values(spec, "codex.http_status_variant")
    assert len(with_status) == 4 and set(with_status) < set(objects)
    rows = {row["variant"]: row for row in spec.table("codex", "variants").rows}
    assert sorted(rows) == sorted(strings + objects)
    for name, row in rows.items():
        wire = row["wire"]
        if name in strings:
            assert (row["kind"], wire) == ("string", name)
        else:
            assert row["kind"] == "object" and isinstance(wire, dict) and list(wire) == [name]
        assert row["keeps_http_status"] is (name in with_status), name
    area = spec.areas["codex"]
    assert (area.product or {}).get("package") == "@openai/codex" and area.version == version
    assert area.covers(version) and area.shipped == (
        *("0.147.0", "0.148.0", "0.151.0", "0.158.0", "0.159.0"),
        *("0.161.0", "0.165.0", "0.166.0", "0.169.0", "0.171.0"),
    )


@pytest.mark.parametrize("version", ["0.3.220", "0.3.273", "0.3.274", "0.3.332", "0.3.334"])
def test_claude_code_union_is_the_four_plus_success_at_each_version(spec: Spec, version: str) -> None:
    spec = spec.at({"claude-code": version})
    errors = _values(spec, "claude-code.error_subtype")
    assert len(errors) == 4 and all(e.startswith("error_") for e in errors)
    assert sorted(_values(spec, "claude-code.result_subtype")) == sorted(["success", *errors])
    assert set(errors) < set(_values(spec, "claude-code.category"))
    area = spec.areas["claude-code"]
    assert ((area.product or {}).get("package"), area.version, area.shipped) == (
        "@anthropic-ai/claude-agent-sdk",
        version,
        ("0.3.220", "0.3.274"),
    )
    assert area.current is not None and area.current.product_of(version) == "2.1." + version.rsplit(".", 1)[1]


@pytest.mark.parametrize(("product", "count"), [("claude-code", 4), ("codex", 6)])
def test_stage_tables_are_complete(spec: Spec, product: str, count: int) -> None:
    stages = _values(spec, f"{product}.stage")
    rows = spec.table(product, "stages").rows
    assert len(stages) == count
    assert [row["stage"] for row in rows] == stages, "one row per stage, in vocabulary order"
    for row in rows:
        assert row["owner"].strip() and row["observable_failure"].strip(), row["stage"]
        assert row["categories"], f"stage {row['stage']} allows no category"


def test_claude_blank_set_is_the_ecmascript_trim_set(spec: Spec) -> None:
    # ECMAScript trim() strips WhiteSpace (TAB, VT, FF, ZWNBSP and every Zs) and
    # LineTerminator (LF, CR, LS, PS); derived here from the Unicode database, not copied.
    expected = {0x09, 0x0B, 0x0C, 0xFEFF, 0x0A, 0x0D, 0x2028, 0x2029}
    expected |= {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Zs"}
    assert set(_values(spec, "claude-code.js_whitespace")) == expected


def test_strip_disagreements_are_real(spec: Spec) -> None:
    blank = set(_values(spec, "claude-code.js_whitespace"))
    rows = spec.table("claude-code", "strip_disagreements").rows
    assert rows
    for row in rows:
        char = chr(row["codepoint"])
        assert (char.strip() == "") != (row["codepoint"] in blank), f"U+{row['codepoint']:04X} does not disagree"
    listed = {row["codepoint"] for row in rows}
    every = {cp for cp in range(0x110000) if (chr(cp).strip() == "") != (cp in blank)}
    assert listed == every, "the table must list every code point where Python and JavaScript disagree"


def test_bound_vectors_state_true_byte_counts(spec: Spec) -> None:
    for row in spec.table("diagnostic", "bound_vectors").rows:
        given, expected = expand_text(row["input"]), expand_text(row["expected"])
        assert len(given.encode()) == row["input_bytes"], row["name"]
        assert len(expected.encode()) == row["expected_bytes"], row["name"]
        assert row["expected_bytes"] <= 4096 and "\ufffd" not in expected, row["name"]


def test_golden_vectors_fit_the_operation_schemas(spec: Spec) -> None:
    ops = schema_validator(spec.root, "operations")

    def check(definition: str, value: Any, where: str) -> None:
        errors = list(
            ops.evolve(schema={"$ref": f"urn:subagent-conformance:spec:operations#/$defs/{definition}"}).iter_errors(
                value
            )
        )
        assert not errors, f"{where}: {errors[0].message}"

    for row in spec.table("selection", "golden_vectors").rows:
        events = [step["event"] for step in row["steps"] if "event" in step]
        if len(events) == len(row["steps"]) and row["binding"] != "text-stream":
            check("select_output_input", {"binding": row["binding"], "events": events}, row["name"])
        check("fold_output_input", {"binding": row["binding"], "steps": row["steps"]}, row["name"])
        check("select_output_output", row["expected"], row["name"])
    for row in spec.table("results", "render_vectors").rows:
        check("render_tool_result_input", row["result"], row["name"])
        check("render_tool_result_output", row["expected"], row["name"])
    for row in spec.table("results", "settle_vectors").rows:
        check("settle_run_input", row["input"], row["name"])
        check("settle_run_output", row["expected"], row["name"])


def test_golden_vector_names_are_unique(spec: Spec) -> None:
    for area in spec.areas.values():
        for table in area.tables.values():
            if any(c.name == "covers" for c in table.columns) and any(c.name == "name" for c in table.columns):
                names = Counter(row["name"] for row in table.rows)
                assert [n for n, k in names.items() if k > 1] == [], f"{area.name}.{table.name}"


def test_seed_map_lists_every_statement_in_order(spec: Spec) -> None:
    files = sorted(p.name for p in (spec.root / "seeds").glob("*.txt"))
    assert [seed.file for seed in spec.seeds] == files
    for seed in spec.seeds:
        cut = seed_statements(spec.root / "seeds" / seed.file)
        listed = [st.text for st in seed.statements]
        assert listed == cut, f"{seed.file}: spec/seeds.yaml must list the statements exactly as cut"


def test_every_requirement_citing_a_seed_carries_a_statement_of_it(spec: Spec) -> None:
    # The schema already forces each piece to name IDs or be a heading/metadata; this checks the
    # other direction: a requirement that cites a seed must carry at least one of its statements.
    carried = {(seed.file, rid) for seed in spec.seeds for st in seed.statements for rid in st.requirements}
    uncarried = [
        f"{req.id} cites {source['seed']}"
        for req in spec.requirements()
        for source in req.sources
        if "seed" in source and (source["seed"], req.id) not in carried
    ]
    assert uncarried == []


def test_grammar_references_resolve_and_compile(spec: Spec) -> None:
    # Every vocabulary, table, column and symbol the grammar names must exist.
    matchers = roots(spec)
    products = set(_values(spec, "diagnostic.product"))
    kinds = set(_values(spec, "diagnostic.text_kind"))
    assert set(matchers) == {(p, k) for p in products for k in kinds}


def test_grammar_accepts_every_expected_provider_text(spec: Spec) -> None:
    matchers = roots(spec)
    for row in spec.table("diagnostic", "line_vectors").rows:
        text = expand_text(row["expected"])
        assert matchers[(row["facts"]["product"], row["kind"])].matches(text), row["name"]
    for product, area in (("Claude Code", "claude-code"), ("Codex", "codex")):
        for row in spec.table(area, "outcome_vectors").rows:
            if "diagnostic" in row["expected"]:
                assert matchers[(product, "run-result")].matches(row["expected"]["diagnostic"]), row["name"]


@pytest.mark.reaches("redaction.leak_vectors", *range(len(load_spec().table("redaction", "leak_vectors").rows)))
def test_grammar_agrees_with_every_leak_vector(spec: Spec) -> None:
    """Each row of leak_vectors (it loops over all of them, so it reaches each)."""
    matchers = roots(spec)
    for row in spec.table("redaction", "leak_vectors").rows:
        verdict = matchers[(row["product"], row["kind"])].matches(expand_text(row["text"]))
        assert verdict is row["sentence"], row["name"]


def _flag(argv: list[str], name: str) -> str | None:
    joined = [a.split("=", 1)[1] for a in argv if a.startswith(name + "=")]
    return joined[0] if joined else next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == name), None)


def _thrown(recording: Json) -> str | None:
    ends = [item["query_end"]["thrown"] for item in recording["wire"] if "query_end" in item]
    return ends[0]["message"] if ends and ends[0] else None


def _failed_result(recording: Json) -> bool:
    results = [i["message"] for i in recording["wire"] if i.get("message", {}).get("type") == "result"]
    return bool(results) and bool(results[-1].get("is_error"))


def _exit_without_result(recording: Json) -> bool:
    exits = [i["exit"]["exitCode"] for i in recording["wire"] if "exit" in i]
    return not any(i.get("message", {}).get("type") == "result" for i in recording["wire"]) and exits[-1:] != [0]


# Whether a recording shows each fact of claude-code table sdk_wire (None: the recording cannot show it).
_SDK_WIRE_FACTS: dict[str, Callable[[Json], bool | None]] = {
    "permission-prompt-tool": lambda r: (
        None if r["mode"] == "bypassPermissions" else _flag(r["argv"], "--permission-prompt-tool") == "stdio"
    ),
    "valued-flag-form": lambda r: f"--permission-mode={r['mode']}" in r["argv"],
    "sdk-version-variable": lambda r: (
        r["client"]["sdk_env"].get("CLAUDE_AGENT_SDK_VERSION") == r["version"]
        and r["client"]["sdk_env"].get("CLAUDE_CODE_ENTRYPOINT") == "sdk-ts"
    ),
    "session-state-frames": lambda r: (
        r["client"]["sdk_env"].get("CLAUDE_CODE_SDK_READS_SESSION_STATE") == "1"
        and not any(i["message"].get("sdk_host_only") for i in r["wire"] if "message" in i)
    ),
    "crash-reporting-variable": lambda r: r["client"]["sdk_env"].get("BUN_ENABLE_CRASH_REPORTING") == "0",
    "error-result-exception": lambda r: (
        (_thrown(r) or "").startswith("Claude Code returned an error result: ") if _failed_result(r) else None
    ),
    "exit-error-form": lambda r: (
        bool(re.fullmatch(r"Claude Code process exited with code \d+", _thrown(r) or ""))
        if _exit_without_result(r)
        else None
    ),
}


@pytest.mark.reaches("claude-code.sdk_wire", *range(len(load_spec().table("claude-code", "sdk_wire").rows)))
def test_sdk_wire_rows_agree_with_every_recording(spec: Spec) -> None:
    """Each row of claude-code table sdk_wire holds in every Agent SDK recording from its first release
    on and not before it (the recordings came through the real SDK's query(), the provider's spawn)."""
    published = (spec.areas["claude-code"].product or {})["releases"]["versions"]
    rows = spec.table("claude-code", "sdk_wire").rows
    assert sorted(_SDK_WIRE_FACTS) == sorted(r["name"] for r in rows), "every row needs its check here"
    paths = sorted((recordings_dir() / "claude-code").glob("*/*.json"))
    assert {p.parent.name for p in paths} == set(spec.areas["claude-code"].recorded)
    for path in paths:
        recording = load_recording(spec, path)
        for row in rows:
            has = _SDK_WIRE_FACTS[row["name"]](recording)
            since = published.index(recording["version"]) >= published.index(row["first_release"])
            assert has in (None, since), f"{path.parent.name}/{path.name}: sdk_wire row {row['name']}"
