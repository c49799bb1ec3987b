"""The upgrade gate as an upgrade's first step: for a version the spec does not ship,
`upgrade-check` writes a draft `versions` entry whose mechanical part is exactly what the suite
ships once a person has taken the decisions; for a shipped version it says so and writes nothing.
The unions are read from the excerpts of the real artefacts in tests/data/upgrade/ (``--from``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.docs import TestMap, render_docs
from conformance.products.draft import MAPPING_TABLE, is_placeholder
from conformance.products.upgrade import nearest
from conformance.spec import load_spec

DATA = Path(__file__).parent / "data" / "upgrade"
SPEC = load_spec()
SOURCES = {
    ("codex", "0.147.0"): DATA / "codex-0.147.0",
    ("codex", "0.171.0"): DATA / "codex-0.171.0",
    ("claude-code", "0.3.220"): DATA / "claude-agent-sdk-0.3.220.d.ts",
    ("claude-code", "0.3.332"): DATA / "claude-agent-sdk-0.3.332.d.ts",
}


def _entries(spec_root: Path, product: str) -> list[Any]:
    """The raw ``versions`` entries of a product's spec file."""
    entries = yaml.safe_load((spec_root / f"{product}.yaml").read_text(encoding="utf-8"))["versions"]
    assert isinstance(entries, list)
    return entries


def _shipped_entry(product: str, version: str) -> Any:
    [entry] = [e for e in _entries(SPEC.root, product) if e["version"] == version]
    return entry


def _spec_without(tmp_path: Path, product: str, version: str) -> Path:
    """A copy of the shipped spec whose product file no longer covers the range ``version`` names,
    as on the day before it was released: npm's list (product.releases) lacks its releases too."""
    root = tmp_path / "spec"
    shutil.copytree(SPEC.root, root)
    file = root / f"{product}.yaml"
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    gone = [e for e in data["versions"] if e["version"] == version]
    data["versions"] = [e for e in data["versions"] if e["version"] != version]
    covered = {str(r) for e in gone for r in e.get("releases") or [e["version"]]}
    listing = data["product"].get("releases") or {}
    if "versions" in listing:  # npm's list as the spec knew it before the release came out
        listing["versions"] = [r for r in listing["versions"] if str(r) not in covered]
    file.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


def fill(draft: Any, decided: Any) -> Any:
    """The draft with a person's decisions put in, each taken from ``decided`` (the shipped entry)
    at the same place, and nothing else: a placeholder value becomes the decided value; a
    placeholder key of a mapping stands for the keys a person adds there (the decided keys the
    draft lacks); a placeholder item ending a list stands for the items a person adds there (the
    decided items past the draft's own). Every other value is the draft's own, so a filled draft
    equal to the shipped entry proves every mechanical field is what the gate wrote. A mapping
    opened only for a person's keys (``wire``) where the person added none is left out, as the
    spec leaves out an empty ``wire``."""
    if is_placeholder(draft):
        return decided
    if isinstance(draft, dict):
        keys = decided if isinstance(decided, dict) else {}
        unfilled = {
            k for k, v in draft.items() if k not in keys and isinstance(v, dict) and v and all(map(is_placeholder, v))
        }
        mapping = {
            k: fill(v, keys[k]) if k in keys else v
            for k, v in draft.items()
            if not is_placeholder(k) and k not in unfilled
        }
        if any(is_placeholder(k) for k in draft):
            mapping |= {k: v for k, v in keys.items() if k not in mapping}
        return mapping
    if isinstance(draft, list):
        items = decided if isinstance(decided, list) else []
        own = draft[:-1] if draft and is_placeholder(draft[-1]) else draft
        filled = [fill(item, items[i]) if i < len(items) else item for i, item in enumerate(own)]
        return filled + (items[len(own) :] if len(own) < len(draft) else [])
    return draft


def _open_places(node: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Where a draft leaves something to a person: the path (list positions left out) of each
    placeholder value, and of each mapping or list a placeholder key or item opens."""
    if is_placeholder(node):
        return {path}
    found: set[tuple[str, ...]] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            found |= {path} if is_placeholder(key) else _open_places(value, (*path, key))
    elif isinstance(node, list):
        for item in node:
            found |= _open_places(item, path)
    return found


def _gate(spec_root: Path, product: str, version: str, draft: Path, *extra: str) -> list[str]:
    return [
        "--spec",
        str(spec_root),
        "upgrade-check",
        "--product",
        product,
        "--version",
        version,
        "--from",
        str(SOURCES[product, version]),
        "--draft",
        str(draft),
        *extra,
    ]


@pytest.mark.parametrize(("product", "version"), [("codex", "0.171.0")])
def test_the_draft_plus_the_recorded_decisions_is_the_shipped_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], product: str, version: str
) -> None:
    """Against a spec that ships only the version before, the gate exits 1 and writes a draft;
    filled with the decisions recorded in the shipped entry, it equals that entry. (Claude Code
    0.3.332's unions equal 0.3.220's: offline it is equivalent, tests/test_release_day.py.)"""
    spec_root = _spec_without(tmp_path, product, version)
    draft_path = tmp_path / "draft.yaml"
    assert main(_gate(spec_root, product, version, draft_path)) == 1
    text = capsys.readouterr().out
    assert "CHANGED" in text and str(draft_path) in text
    [draft] = yaml.safe_load(draft_path.read_text(encoding="utf-8"))
    shipped = _shipped_entry(product, version)
    assert fill(draft, shipped) == shipped
    # the decisions are what the gate left open: the draft is not the entry without them
    assert draft != shipped and fill(draft, {}) != shipped


@pytest.mark.parametrize(
    ("without", "version", "near", "catch_all"),
    [("0.171.0", "0.171.0", "0.169.1", False), (None, "0.172.0", "0.171.0", True)],
    ids=["0.171.0-over-0.169.x", "a-new-member-and-a-new-catch-all"],
)
def test_the_codex_draft_lists_each_decision_and_leaves_it_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], without: str | None, version: str, near: str, catch_all: bool
) -> None:
    """Each new member gets a row with its stop reason open, a doc line and a decision to take;
    a catch-all member no entry recorded gets its category open (the one 0.161.0 decided is not
    drafted again); the decisions are listed in the output and atop the file. The draft is a
    delta over the nearest covered release below, past the newest range over the newest."""
    spec_root = _spec_without(tmp_path, "codex", without) if without else SPEC.root
    source = DATA / "codex-0.171.0"
    if catch_all:  # 0.171.0's schema with a string member and a catch-all member no entry has
        source = tmp_path / "schema"
        shutil.copytree(DATA / "codex-0.171.0", source)
        file = source / "v2" / "ErrorNotification.json"
        document = json.loads(file.read_text(encoding="utf-8"))
        members = document["definitions"]["CodexErrorInfo"]["anyOf"]
        members += [{"type": "string", "enum": ["quotaWarning"]}, {"type": "integer"}]
        file.write_text(json.dumps(document), encoding="utf-8")
    draft_path = tmp_path / "draft.yaml"
    argv = ["--spec", str(spec_root), "upgrade-check", "--product", "codex", "--version", version]
    assert main([*argv, "--from", str(source), "--draft", str(draft_path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["shipped"] is False and report["nearest"] == near and report["draft"] == str(draft_path)
    text = draft_path.read_text(encoding="utf-8")
    [draft] = yaml.safe_load(text)
    adds = draft["union"]["adds"]
    assert adds and [r["variant"] for r in draft["rows"]["variants"]] == adds
    assert draft["releases"] == [version]
    assert all(is_placeholder(r["stop_reason"]) for r in draft["rows"]["variants"])
    assert sorted(draft["union"]["docs"]) == sorted(adds) and all(map(is_placeholder, draft["union"]["docs"].values()))
    assert [d["about"] for d in draft["decisions"][:-1]] == [*adds, *(["catch_all"] if catch_all else [])]
    for member in adds:
        assert any(line.startswith(f"{member}:") for line in report["decisions"])
        assert f". {member}:" in text  # the decision, numbered, in the file's head
    assert any("catch-all" in line for line in report["decisions"]) is catch_all
    # a person decides exactly these; the rest (members, vocabularies, rows' kind, wire form and
    # status, the catch-all's schema, what each decision is about, the range's releases) is the gate's
    assert _open_places(draft) == {("union", "docs", m) for m in adds} | {
        ("sources",),
        ("recorded",),
        ("wire_note",),
        *([("union", "catch_all", "category")] if catch_all else []),
        ("rows", "variants", "stop_reason"),
        ("rows",),
        ("wire",),
        ("decisions",),
        ("decisions", "decision"),
        ("decisions", "sources"),
    }
    if catch_all:
        assert adds == ["quotaWarning"] and draft["union"]["catch_all"]["schema"] == {"type": "integer"}
    else:
        assert adds == ["bioPolicy"] and "catch_all" not in draft["union"]


def test_an_object_member_with_a_status_is_drafted_to_keep_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new object member whose detail has httpStatusCode keeps the status, one without does not."""
    schema = tmp_path / "schema"
    shutil.copytree(DATA / "codex-0.147.0", schema)
    file = schema / "v2" / "ErrorNotification.json"
    document = json.loads(file.read_text(encoding="utf-8"))
    members = document["definitions"]["CodexErrorInfo"]["oneOf"]
    for name, detail in (
        ("quotaFailed", {"type": "object", "properties": {"httpStatusCode": {"type": ["integer", "null"]}}}),
        ("modelCap", {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": ["hard", "soft"]}}}),
    ):
        members.append({"type": "object", "required": [name], "properties": {name: detail}})
    file.write_text(json.dumps(document), encoding="utf-8")
    # 0.148.0-alpha.9: not covered, its neighbour below 0.148.0-alpha.8 (the range of 0.147.0)
    argv = ["upgrade-check", "--product", "codex", "--version", "0.148.0-alpha.9"]
    assert main([*argv, "--from", str(schema), "--draft", str(tmp_path / "d.yaml"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [draft] = yaml.safe_load((tmp_path / "d.yaml").read_text(encoding="utf-8"))
    rows = {r["variant"]: r for r in draft["rows"]["variants"]}
    assert rows["quotaFailed"] | {"stop_reason": None} == {
        "variant": "quotaFailed",
        "kind": "object",
        "wire": {"quotaFailed": {}},
        "keeps_http_status": True,
        "stop_reason": None,
    }
    assert rows["modelCap"]["wire"] == {"modelCap": {"kind": "hard"}} and rows["modelCap"]["keeps_http_status"] is False
    # they join the vocabularies every object variant is in and leave the newer variants; the one
    # with a status is like the variants that are also in http_status_variant, which `into` cannot say
    assert draft["union"]["into"] == ["variant_object", "variant", "category"]
    assert draft["union"]["out_of"] == ["newer_variant"]
    assert any(line.startswith("quotaFailed") and "http_status_variant" in line for line in report["decisions"])
    assert not any(line.startswith("modelCap is like") for line in report["decisions"])


def test_a_new_error_subtype_is_drafted_like_the_error_subtypes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new SDKResultError subtype joins the vocabularies and cells the error subtypes are in, and
    its classification row is the first error subtype's row with its name put in."""
    declarations = tmp_path / "sdk.d.ts"
    original = SOURCES["claude-code", "0.3.332"].read_text(encoding="utf-8")
    declarations.write_text(
        original.replace("'error_max_budget_usd' |", "'error_max_budget_usd' | 'error_startup_failure' |"),
        encoding="utf-8",
    )
    argv = ["upgrade-check", "--product", "claude-code", "--version", "0.3.400", "--from", str(declarations)]
    assert main([*argv, "--draft", str(tmp_path / "d.yaml")]) == 1
    assert "READ: SDKResultError.subtype: added error_startup_failure" in capsys.readouterr().out
    [draft] = yaml.safe_load((tmp_path / "d.yaml").read_text(encoding="utf-8"))
    area = SPEC.areas["claude-code"]
    holding = [
        n
        for n, v in area.vocabularies.items()
        if set(v.values) >= set(SPEC.vocabulary("claude-code.error_subtype").values)
    ]
    assert draft["union"]["adds"] == ["error_startup_failure"] and draft["union"]["into"] == holding
    stages = [c for c in draft["union"]["cells"] if c["table"] == "stages"]
    assert [c["where"] for c in stages] == [{"stage": "query-run"}]
    [row] = draft["rows"]["result_classification"]
    [model] = [r for r in area.tables["result_classification"].rows if r.get("category") == "error_during_execution"]
    assert row["category"] == "error_startup_failure" and row["name"] == "error-startup-failure"
    assert {k: v for k, v in row.items() if k not in ("category", "name", "condition", "stop_reason")} == {
        k: v for k, v in model.items() if k not in ("category", "name", "condition", "stop_reason")
    }
    assert '"error_startup_failure"' in row["condition"] and is_placeholder(row["stop_reason"])
    assert is_placeholder(draft["product_version"])


@pytest.mark.parametrize(("product", "version"), sorted(SOURCES))
def test_a_shipped_version_is_shipped_and_writes_no_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], product: str, version: str
) -> None:
    draft_path = tmp_path / "draft.yaml"
    assert main(_gate(SPEC.root, product, version, draft_path)) == 0
    text = capsys.readouterr().out
    assert "SHIPPED:" in text and f'"{product}": "{version}"' in text and "DIFFERS" not in text
    assert not draft_path.exists()
    assert main(_gate(SPEC.root, product, version, draft_path, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["shipped"], report["equal"], report["nearest"]) == (True, True, version)
    assert "draft" not in report and "decisions" not in report and not draft_path.exists()


def test_a_shipped_version_whose_union_disagrees_exits_1_without_a_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declarations = tmp_path / "sdk.d.ts"
    original = SOURCES["claude-code", "0.3.332"].read_text(encoding="utf-8")
    declarations.write_text(original.replace("'error_max_budget_usd' |", "'error_startup_failure' |"), encoding="utf-8")
    argv = ["upgrade-check", "--product", "claude-code", "--version", "0.3.332", "--from", str(declarations)]
    assert main([*argv, "--draft", str(tmp_path / "d.yaml")]) == 1
    text = capsys.readouterr().out
    assert "SHIPPED, DIFFERS" in text and "  + error_startup_failure" in text and "  - error_max_budget_usd" in text
    assert not (tmp_path / "d.yaml").exists()


def test_a_version_between_shipped_ones_is_compared_with_both_neighbours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.170.0 (never released: the spec covers 0.169.1 and then 0.171.0) read from the 0.171.0
    schema is compared with the covered releases around it, 0.169.1 and 0.171.0: it differs from
    the one below (bioPolicy) and equals the one above, so it is equivalent to 0.171.0 and no
    draft is written."""
    argv = ["upgrade-check", "--product", "codex", "--version", "0.170.0", "--from", str(DATA / "codex-0.171.0")]
    assert main([*argv, "--draft", str(tmp_path / "d.yaml"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["covered_neighbours"] == ["0.169.1", "0.171.0"] and report["equivalent_to"] == "0.171.0"
    assert report["compared"]["0.169.1"]["changes"] and not report["compared"]["0.171.0"]["changes"]
    assert not (tmp_path / "d.yaml").exists()


def test_the_nearest_shipped_version_is_the_newest_not_newer() -> None:
    shipped = ["0.147.0", "0.171.0", "1.2.0"]
    assert nearest(shipped, "0.171.0") == "0.171.0"
    assert nearest(shipped, "0.160.0") == "0.147.0"  # numbers, not text: 0.99 < 0.147
    assert nearest(shipped, "0.99.0") == "0.147.0"  # older than every shipped one: the oldest
    assert nearest(shipped, "1.10.0") == "1.2.0"
    assert nearest(shipped, "1.2.0-rc.1") == "0.171.0"  # a pre-release comes before its release


def test_from_needs_an_exact_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["upgrade-check", "--product", "codex", "--version", "latest", "--from", str(DATA / "codex-0.171.0")]
    assert main(argv) == 2
    assert "--version must be exact" in capsys.readouterr().err


# ---- the product pages


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return render_docs(SPEC, TestMap())


@pytest.mark.parametrize("product", ["codex", "claude-code"])
def test_each_product_page_shows_every_shipped_version_and_what_it_changes(pages: dict[str, str], product: str) -> None:
    """Under the summary the shipped versions; in section Versions one anchor per version, and
    for each later one its added members with their mapping rows, its catch-all, every rows it
    adds elsewhere, every wire difference and every decision, read from the spec's entries."""
    area = SPEC.areas[product]
    page = pages[f"contract/{product}.md"]
    intro, _, section = page.partition('<a id="versions"></a>')
    assert section, "no Versions section"
    assert all(f"](#version-{v})" in intro.split("## Requirements")[0] for v in area.shipped)
    for at, entry in enumerate(area.versions):
        anchor = f'<a id="version-{entry.version}"></a>'
        assert section.count(anchor) == 1
        own = section.split(anchor)[1].split('<a id="version-')[0]
        assert f'`{{"providers": {{"{product}": "{entry.version}"}}}}`' in own
        for member in entry.union.get("adds", ()):
            [line] = [ln for ln in own.splitlines() if ln.startswith(f"| `{member}` |")]
            [row] = [r for r in entry.rows.get(MAPPING_TABLE[product], ()) if member in r.values()]
            assert f"stop_reason: `{row['stop_reason']}`" in line, line
        for cell in entry.union.get("cells", ()):
            assert f"column `{cell['column']}` of the [{cell['table']}](#table-{cell['table']}) row" in " ".join(
                own.split()
            )
        if "catch_all" in entry.union:
            assert json.dumps(entry.union["catch_all"]["schema"]) in " ".join(own.split())
        for name, rows in entry.rows.items():
            assert all(f"[{name}](#table-{name})" in own for _ in rows)
        for key in entry.wire:
            assert f"- `{key}`:" in own
        for decision in entry.decisions:
            assert f"- **{decision['about']}**:" in own
        assert (at == 0) is (f"### {entry.version} (base)" in own)
