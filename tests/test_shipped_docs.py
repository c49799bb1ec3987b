"""The docs as the wheel ships them (conformance/spec/published.py, staged by hatch_build.py): a
link to a file the wheel ships is made relative to where the wheel puts the page, a link to any
other file of the repository points at it in the published repository, and nothing else changes.
The built wheel's every link is checked in tests/test_from_a_wheel.py; these are the rules, on a
small tree, without a build."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.spec.published import published_base, ship_docs, shipped_href

LAYOUT = {
    "conformance": "conformance",
    "spec": "conformance/_data/spec",
    "docs": "conformance/_data/docs",
}
FILES = [  # the repository's files
    "conformance/test_x.py",
    "spec/x.yaml",
    "tests/test_y.py",
    "README.md",
    "docs/contract.md",
    "docs/contract/a.md",
]
BASE = published_base("https://example.invalid/o/r/", "1.2.3")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for file in FILES:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text("x\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("href", "shipped"),
    [
        ("../../conformance/test_x.py", "../../../test_x.py"),  # a module of the package: beside the data
        ("../../spec/x.yaml#L1", "../../spec/x.yaml#L1"),  # spec/ moves with docs/: the same link
        ("../contract.md#SEL-001", "../contract.md#SEL-001"),  # another page
        ("#SEL-001", "#SEL-001"),
        ("../../tests/test_y.py", f"{BASE}/tests/test_y.py"),  # not shipped: published
        ("../../README.md#top", f"{BASE}/README.md#top"),
        ("../../conformance/gone.py", f"{BASE}/conformance/gone.py"),  # no such file here: not made relative
        ("https://example.org/x", "https://example.org/x"),
        ("../../../outside.md", "../../../outside.md"),  # leaves the repository: not ours to move
    ],
)
def test_each_kind_of_link(root: Path, href: str, shipped: str) -> None:
    assert shipped_href(root, "docs/contract/a.md", href, LAYOUT, BASE) == shipped


def test_a_staged_copy_changes_only_links_and_leaves_the_repository_docs_alone(root: Path, tmp_path: Path) -> None:
    page = root / "docs" / "contract" / "a.md"
    original = "See [the test](../../tests/test_y.py), [x](../../spec/x.yaml) and \\[not a link\\](../../tests/z).\n"
    page.write_text(original, encoding="utf-8")
    out = tmp_path / "staged"
    assert ship_docs(root, "docs", out, LAYOUT, BASE) == 1
    assert (out / "contract" / "a.md").read_text(encoding="utf-8") == original.replace(
        "../../tests/test_y.py", f"{BASE}/tests/test_y.py"
    )
    assert page.read_text(encoding="utf-8") == original
    assert BASE == "https://example.invalid/o/r/blob/v1.2.3"
