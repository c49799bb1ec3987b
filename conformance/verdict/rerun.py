"""The command that reruns just the requirements a failing run violated (issue #30, item 5): a red
run ends with it, on the terminal and in the Markdown summary, shell-quoted so that an exec
adapter's command line (``exec:node adapter.js``) survives a copy and paste."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

RULES_PROPERTY = "rules"  # a failure's blamed requirements without its consequences (blame.rule_requirements)


def rerun_ids(report: dict[str, Any], rules: Iterable[str] | None = None) -> list[str]:
    """The violated MUST requirements, in the report's order; of those, the rules a failure broke
    (not the requirements it violated only as a consequence of one), when any are known."""
    violated = [r["id"] for r in report["requirements"] if r["status"] == "violated" and r["level"] == "MUST"]
    known = set(rules or ())
    narrowed = [rid for rid in violated if rid in known]
    return narrowed or violated


def rerun_command(impl: str, ids: Iterable[str]) -> str | None:
    """``python -m pytest --pyargs conformance --impl=IMPL --requirement=ID ...``, or None for no ID."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return None
    words = ["python", "-m", "pytest", "--pyargs", "conformance", f"--impl={impl}"]
    words += [f"--requirement={rid}" for rid in wanted]
    return shlex.join(words)
