"""docs/ is generated from spec/ (and the tests' requirement markers), must not drift from it,
and holds what a reader looks for: one anchor per requirement, a link for every ID, values
shown unless they are long, and the exact lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.docs import INLINE_LIMIT, TestMap, render_docs
from conformance.docs.text import ELIDED, REQUIREMENT_ID
from conformance.spec import Spec, load_spec
from conformance.spec.yamlpos import load_located

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec()


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    """The committed pages (the drift test proves they are a fresh rendering)."""
    found = {str(p.relative_to(DOCS)): p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")}
    assert "contract.md" in found
    return found


def test_committed_docs_match_a_fresh_rendering(capsys: pytest.CaptureFixture[str]) -> None:
    """The drift gate's own command, in this process (CI also runs `subagent-conformance docs
    --check` as a step of its own); its collection is shared with the other rendering tests."""
    code = main(["docs", "--check", "--output", str(DOCS)])
    assert code == 0, capsys.readouterr().err + "\nrun `subagent-conformance docs` and commit docs/"


_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# not an escaped \[...\]; a label holds no "[", so an unclosed "[" in a value (a cut summary) starts no link
_LINK = re.compile(r"(?<!\\)\[([^\[\]]*)(?<!\\)\]\(([^)\s]*)\)")


def _anchors(pages: dict[str, str]) -> dict[str, list[str]]:
    return {name: _ANCHOR.findall(text) for name, text in pages.items()}


def test_every_requirement_has_exactly_one_anchor(spec: Spec, pages: dict[str, str]) -> None:
    found = [anchor for anchors in _anchors(pages).values() for anchor in anchors if REQUIREMENT_ID.fullmatch(anchor)]
    for req in spec.requirements():
        assert found.count(req.id) == 1, f"{req.id} has {found.count(req.id)} anchors"
    assert sorted(found) == sorted(r.id for r in spec.requirements())


def test_every_id_occurrence_is_a_link_to_an_existing_anchor(pages: dict[str, str]) -> None:
    anchors = _anchors(pages)
    problems = []
    for name, text in pages.items():
        # what is left once anchors, links whose text is the ID and code spans of JSON data are removed
        rest = _ANCHOR.sub("", text)
        for match in _LINK.finditer(text):
            label, href = match.groups()
            if not REQUIREMENT_ID.fullmatch(label):
                continue
            page, _, fragment = href.partition("#")
            target = str((Path(name).parent / page).as_posix()) if page else name
            target = str(Path(target)).replace("\\", "/")
            target = _normalise(target)
            if fragment != label or label not in anchors.get(target, []):
                problems.append(f"{name}: [{label}]({href}) does not reach anchor {label}")
        rest = _LINK.sub(lambda m: "" if REQUIREMENT_ID.fullmatch(m.group(1)) else m.group(1), rest)
        problems += [f"{name}: {rid} is not a link" for rid in REQUIREMENT_ID.findall(rest)]
    assert not problems, "\n".join(problems[:20])


def _normalise(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def test_elided_values_are_only_those_over_the_inline_limit(spec: Spec, pages: dict[str, str]) -> None:
    """An elision marker states the value's length and line; both are true, and the length is
    over the limit. A rendering with no limit would show everything."""
    marker = re.compile(r"\*\(([\d,]+) characters, " + ELIDED + r": \[([^\]:]+):(\d+)\]")
    seen = 0
    located: dict[str, set[int]] = {}
    for name, text in pages.items():
        for match in marker.finditer(text):
            seen += 1
            length, file, line = int(match.group(1).replace(",", "")), match.group(2), int(match.group(3))
            assert length > INLINE_LIMIT, f"{name}: a {length}-character value is elided"
            if file not in located:
                located[file] = set(load_located(ROOT / file).lines.values())
            assert line in located[file], f"{name}: {file}:{line} holds no value"
        assert text.count(ELIDED) == len(marker.findall(text)), f"{name}: an elision marker of another form"
    assert seen, "no value is long enough to be elided: the check would pass without looking"


def test_short_literals_keep_their_whitespace_visible(pages: dict[str, str]) -> None:
    assert '`"\\nDiagnostic: "`' in pages["contract/results.md"]
    assert '`"Error: "`' in pages["contract/results.md"]


def test_examples_page_has_the_codex_429_line(pages: dict[str, str]) -> None:
    line = (
        "Product subagent failure (product: Codex; stage: turn; category: responseTooManyFailedAttempts; "
        "HTTP status: 429)"
    )
    assert f"`{line}`" in pages["examples.md"]


def test_no_line_is_a_wall_of_text(pages: dict[str, str]) -> None:
    """Prose is wrapped; only a table row or an exact value may run long, and not 1,000+ characters."""
    for name, text in pages.items():
        for number, line in enumerate(text.splitlines(), 1):
            assert len(line) <= 1000, f"{name}:{number} is {len(line)} characters"


def test_render_needs_only_the_spec_and_the_markers(spec: Spec) -> None:
    """With no tests at all, every page still renders (and says so, rather than inventing tests)."""
    files = render_docs(spec, TestMap())
    assert "Tests: none collected." in files[f"contract/{next(iter(spec.areas))}.md"]


def test_docs_check_fails_on_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "--output", str(tmp_path)]) == 0
    page = tmp_path / "contract" / "codex.md"
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    (tmp_path / "contract" / "left-over.md").write_text("an area that is gone\n", encoding="utf-8")
    assert main(["docs", "--check", "--output", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "out of date" in err and "contract/codex.md" in err and "contract/left-over.md" in err


def test_every_table_and_vocabulary_has_exactly_one_anchor(spec: Spec, pages: dict[str, str]) -> None:
    anchors = _anchors(pages)
    for area in spec.areas.values():
        on_page = anchors[f"contract/{area.name}.md"]
        for name in area.tables:
            assert on_page.count(f"table-{name}") == 1, f"{area.name}: table {name}"
        for name in area.vocabularies:
            assert on_page.count(f"vocab-{name}") == 1, f"{area.name}: vocabulary {name}"
    every = [a for found in anchors.values() for a in found]
    assert len(every) == sum(len(set(found)) for found in anchors.values()), "an anchor repeats on its page"


def test_every_relative_link_resolves(pages: dict[str, str]) -> None:
    """A page link reaches a generated anchor; a file link reaches a file, and its #L<n> a line of it."""
    anchors = _anchors(pages)
    problems = []
    for name, text in pages.items():
        for label, href in _LINK.findall(text):
            if href.startswith(("http://", "https://")):
                continue
            path, _, fragment = href.partition("#")
            # relative to the repository: pages sit in docs/, files anywhere in the checkout
            target = _normalise(f"docs/{Path(name).parent.as_posix()}/{path}") if path else f"docs/{name}"
            page = target.removeprefix("docs/")
            if target.startswith("docs/") and page in pages:
                target = page
                if fragment and fragment not in anchors[target]:
                    problems.append(f"{name}: [{label}]({href}) names no anchor of {target}")
                continue
            file = ROOT / target
            if not file.resolve().is_file():
                problems.append(f"{name}: [{label}]({href}) reaches no file")
            elif fragment.startswith("L") and int(fragment[1:]) > len(file.read_text(encoding="utf-8").splitlines()):
                problems.append(f"{name}: [{label}]({href}) is past the end of the file")
    assert not problems, "\n".join(problems[:20])
