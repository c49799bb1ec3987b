"""Render spec/ into docs/: the contract's documentation, generated, never edited.

``docs/contract.md`` is the entry point; each area has its page under ``docs/contract/``;
``docs/examples.md`` shows the lines; ``docs/implementers-guide.md`` is rendered from the
template beside this module. Every requirement ID anywhere links to its one anchor.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from conformance.docs.examples import render_examples
from conformance.docs.guide import render_guide
from conformance.docs.pages import GENERATED, bullet, finish, render_area, render_coverage, render_seeds
from conformance.docs.testmap import TestMap, collect
from conformance.docs.text import INLINE_LIMIT, Site, cell, wrap
from conformance.docs.typescript import STARTER_TYPES, render_types
from conformance.spec import Spec

__all__ = ["INLINE_LIMIT", "Site", "TestMap", "collect", "render_docs"]

INDEX = PurePosixPath("contract.md")


def _index(site: Site) -> str:
    spec = site.spec
    reqs = list(spec.requirements())
    out = [f"# {spec.title}", "", GENERATED, ""]
    out += wrap(
        f"Spec version {spec.version}: {len(spec.areas)} areas, {len(reqs)} requirements "
        f"({sum(r.level == 'MUST' for r in reqs)} MUST, {sum(r.level == 'SHOULD' for r in reqs)} SHOULD, "
        f"{sum(r.excluded is not None for r in reqs)} excluded from testing)."
    ) + [""]
    out += ["## How to read it", ""]
    out += wrap(
        "Each area has its own page: first what the area is about, then every requirement — its level "
        "(MUST or SHOULD), its text, the decision this spec takes where the sources are silent, its "
        "sources (a seed note, an upstream `path:line`, a product artefact), the golden vectors that "
        "illustrate it and the tests that check it — and last the area's tables and vocabularies, "
        "the closed sets and rows the requirements draw on."
    ) + [""]
    out += wrap(
        f"Every requirement has one anchor, named by its ID alone, on its area's page (for example "
        f"{site.ids(INDEX, [reqs[0].id])}); it never changes with the title, and every ID on every page, in "
        "the reports and in the matrix links to it. Tables and vocabularies have `#table-<name>` "
        "and `#vocab-<name>` on their area's page. Values are shown exactly: strings as JSON string "
        'literals, so `"\\nDiagnostic: "` shows its newline and its trailing space; a value longer than '
        f"{INLINE_LIMIT} characters is not shown but linked to the line of the spec file that holds it."
    ) + [""]
    out += wrap(
        "To find a rule, search the titles under [Every requirement](#every-requirement) below; to see what "
        "a provider prints for a failure, open the examples page; to write an adapter, start with the guide."
    ) + [""]
    out += [
        "- [What the lines look like](examples.md): every product × stage as exact text, and the "
        "renderings the parent reads.",
        "- [Implementer's guide](implementers-guide.md): each operation, a worked example and its pitfalls.",
        "- [Seed statements](contract/seeds.md) and the requirements that carry each one.",
        "- [Coverage appendix](contract/coverage.md): the tests of every requirement.",
        "",
        "## Areas",
        "",
    ]
    for area in spec.areas.values():
        page = site.area_page(area.name)
        summary = " ".join(area.summary.split())
        first = summary.split(". ")[0].rstrip(".") + "."
        out += bullet(f"[{area.title}]({page}) — `{area.id_prefix}`, {len(area.requirements)} requirements. {first}")
    out += ["", '<a id="every-requirement"></a>', "", "## Every requirement", ""]
    for area in spec.areas.values():
        out += [f"### {area.title}", "", "| ID | level | title |", "|---|---|---|"]
        out += [f"| {site.ids(INDEX, [r.id])} | {r.level} | {cell(r.title)} |" for r in area.requirements]
        out.append("")
    return finish(out)


def render_docs(spec: Spec, tests: TestMap, repo_root: Path | None = None) -> dict[str, str]:
    """Every generated file, keyed by its path under docs/."""
    site = Site(spec, repo_root if repo_root is not None else spec.root.parent)
    files = {str(INDEX): _index(site)}
    for area in spec.areas.values():
        files[str(site.area_page(area.name))] = render_area(site, area, tests)
    files["contract/seeds.md"] = render_seeds(site)
    files["contract/coverage.md"] = render_coverage(site, tests)
    files["examples.md"] = render_examples(site)
    files["implementers-guide.md"] = render_guide(site, tests)
    files[STARTER_TYPES] = render_types(spec.root / "schema")  # the starter's TypeScript types (init)
    return files
