"""Where the suite's files are read outside a checkout: the project as published at the suite's
version tag, and the docs as the wheel ships them.

docs/ is written for a checkout (and the repository on GitHub): a page links to a test, a spec
line or a module by its path in the repository (``../../tests/test_x.py``). The wheel puts docs/
elsewhere (``conformance/_data/docs``) and leaves some files out (``tests/``, the README), so the
build (``hatch_build.py``) stages a copy whose every such link works where the installed pages
are read: a file the wheel ships by a relative link inside the installed tree, any other by its
URL in the published repository at the version's tag, :func:`published_base`, the base the
summary's links use too (conformance/verdict/summary.py).

Standard library only: the build loads this file by its path, without the package or its
dependencies.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

# An inline Markdown link: not an escaped \[...\]; a label holds no "[" (tests/test_docs.py reads them so too).
LINK = re.compile(r"(?<!\\)\[([^\[\]]*)(?<!\\)\]\(([^)\s]*)\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def published_base(source: str, version: str) -> str:
    """Every file of the project as published with this version: the Source repository
    (pyproject.toml [project.urls]) at the tag ``v<version>``; ``<base>/docs/contract.md`` is the
    contract."""
    return f"{source.rstrip('/')}/blob/v{version}"


def installed_path(path: str, layout: Mapping[str, str]) -> str | None:
    """Where the wheel puts a repository path (``spec/x.yaml`` -> ``conformance/_data/spec/x.yaml``),
    by the longest ``layout`` entry holding it (repository path -> path in the installed tree); None
    for a path the wheel does not ship."""
    for prefix in sorted(layout, key=len, reverse=True):
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return posixpath.join(layout[prefix], path[len(prefix) :].lstrip("/")).rstrip("/")
    return None


def shipped_href(root: Path, page: str, href: str, layout: Mapping[str, str], base: str) -> str:
    """``href`` of the repository page ``page`` (``docs/contract/x.md``) as the shipped copy of the
    page needs it: relative to where the wheel puts the page when the wheel ships its target, else
    the target's published URL. Anchors, URLs and links leaving the repository are kept."""
    path, sep, fragment = href.partition("#")
    if not path or _SCHEME.match(path) or path.startswith("/"):
        return href
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if target == ".." or target.startswith("../"):
        return href
    installed, here = installed_path(target, layout), installed_path(page, layout)
    if installed is not None and here is not None and (root / target).exists():
        moved = posixpath.relpath(installed, posixpath.dirname(here))
        new = moved + ("/" if path.endswith("/") else "")
    else:
        new = f"{base}/{target}"
    return new + sep + fragment


def ship_page(root: Path, page: str, text: str, layout: Mapping[str, str], base: str) -> str:
    """One Markdown page with every link rewritten by :func:`shipped_href`."""

    def rewrite(match: re.Match[str]) -> str:
        label, href = match.group(1), match.group(2)
        return f"[{label}]({shipped_href(root, page, href, layout, base)})"

    return LINK.sub(rewrite, text)


def ship_docs(root: Path, docs: str, out: Path, layout: Mapping[str, str], base: str) -> int:
    """Copy ``root/docs`` to ``out``, its Markdown pages rewritten for where the wheel puts them
    (``layout``, repository path -> installed path, ``docs`` itself included); the number of links
    that changed."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(root / docs, out)
    changed = 0
    for file in sorted(out.rglob("*.md")):
        page = f"{docs}/{file.relative_to(out).as_posix()}"
        text = file.read_text(encoding="utf-8")
        shipped = ship_page(root, page, text, layout, base)
        if shipped != text:
            changed += sum(a != b for a, b in zip(LINK.findall(text), LINK.findall(shipped), strict=True))
            file.write_text(shipped, encoding="utf-8")
    return changed
