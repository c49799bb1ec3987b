"""The Markdown summary of a run, fit for a CI step summary: a header that agrees with the exit
status, the violated requirements once each as links, the failing tests once each with what they
show, and the expected failures with their reasons and links."""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any

from conformance.spec.links import requirement_url
from conformance.spec.published import published_base
from conformance.spec.resources import PACKAGE
from conformance.verdict.first_failure import first_failures
from conformance.verdict.inert import markdown_safe, terminal_safe

_MOST = 40  # rows per section before the rest is left to the JSON report

_HEADLINES = {
    "conforms": "conforms",
    "conforms-with-expected-failures": "conforms, with known gaps listed as expected failures",
    "violated": "**violates the contract**",
    "incomplete": "**run failed** (see the exit status and the log)",
    "usage-error": "**usage error**: the suite did not run",
}


def shipped_contract() -> str:
    """The rendered contract this installation carries, as a file URL (a wheel ships docs/ under
    conformance/_data, a checkout has it beside the package): where a summary's or a matrix's
    links point when no published contract is known, :func:`published_contract`."""
    for docs in (PACKAGE / "_data" / "docs", PACKAGE.parent / "docs"):
        if (docs / "contract.md").is_file():
            return (docs / "contract.md").as_uri()
    raise FileNotFoundError(
        f"the rendered contract is neither at {PACKAGE / '_data' / 'docs'} (installed wheel) nor at "
        f"{PACKAGE.parent / 'docs'} (checkout): the installation is incomplete; pass --docs-url"
    )


def published_contract() -> str:
    """The contract as published with this version of the suite: its docs/ in the project's Source
    repository (the package's metadata, pyproject.toml [project.urls]) at the version's tag. The
    default target of a summary's and a matrix's links, since both are read elsewhere (a CI step
    summary, an uploaded artefact) and a file URL into the machine's venv would be dead there and
    name the machine; without metadata (a bare source tree) the shipped contract, :func:`shipped_contract`."""
    try:
        meta = metadata.metadata("subagent-conformance")
    except metadata.PackageNotFoundError:
        return shipped_contract()
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [] if ", " in entry)
    source = urls.get("Source")
    if not source:
        return shipped_contract()
    return f"{published_base(source, meta['Version'])}/docs/contract.md"


# What a declaration claims when it leaves a key out (spec/schema/operations.json, the declaration).
_ABSENT = {
    "bindings": "none",
    "providers": "none",
    "process_drivers": "none",
    "background": "none",
    "settlements": "every path its bindings take (not narrowed)",
    "operations": "every one its claims require",
}


def _cell(text: object, limit: int | None = None) -> str:
    """A table cell of text the adapter or the user wrote: one line, at most ``limit`` characters,
    inert (no tag of it opens or closes in the rendered page, no control reaches a terminal)."""
    folded = " ".join(str(text).split())
    return markdown_safe(folded[:limit] if limit is not None else folded).replace("|", "\\|")


def _code(text: object) -> str:
    """``text`` as a code span: HTML is not parsed in one, so only a backtick could end it early."""
    inner = terminal_safe(" ".join(str(text).split())).replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall("`+", inner)), default=0) + 1)
    pad = " " if inner.startswith("`") or inner.endswith("`") else ""
    return f"{ticks}{pad}{inner}{pad}{ticks}"


def _fenced(text: str) -> list[str]:
    """``text`` as a fenced block, its fence longer than any backtick run in it (so it cannot end early)."""
    ticks = "`" * max(3, max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return [f"{ticks}text", terminal_safe(text), ticks]


def _claims(declaration: dict[str, Any]) -> str:
    """Every key the declaration has, and each optional one it leaves out, with what that claims."""
    parts = [f"protocol {_cell(declaration['protocol'])}"] if "protocol" in declaration else []
    for key, absent in _ABSENT.items():
        value = declaration.get(key)
        if isinstance(value, dict):
            shown = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, list):
            shown = ", ".join(str(v) for v in value)
        else:
            shown = "" if value is None else str(value)
        parts.append(f"{key.replace('_', ' ')} {_cell(shown) if shown else absent}")
    known = {"protocol", "implementation", *_ABSENT}
    parts += [f"{_cell(key)} {_cell(value)}" for key, value in declaration.items() if key not in known]
    return "; ".join(parts)


def _link(rid: str, base: str) -> str:
    return f"[{rid}]({requirement_url(rid, base)})"


def _follows(requirement: dict[str, Any], docs: str) -> str:
    """A consequence's mark: the rules it follows from (the report's consequence_of)."""
    rules = requirement.get("consequence_of")
    return f" (consequence: follows from {', '.join(_link(rid, docs) for rid in rules)})" if rules else ""


def _capped(rows: list[str], what: str) -> list[str]:
    if len(rows) <= _MOST:
        return rows
    return [*rows[:_MOST], f"| … | {len(rows) - _MOST} more {what} in the JSON report | |"]


def _real_products(products: list[dict[str, Any]]) -> str:
    """What the real-products tier ran (report.json#/$defs/real_product): each package, what its
    binary says of itself, where in the products cache it lies and the start of its sha256."""
    return "; ".join(
        f"{_code(p['package'])} ({_cell(p['product_version'])}, {_code(p['binary'])} sha256 {p['sha256'][:12]}"
        + (f", Node.js {_cell(p['node'])}" if p.get("node") else "")
        + ")"
        for p in products
    )


def markdown_summary(
    report: dict[str, Any], docs: str | None = None, rerun: str | None = None, over_claims: list[str] | None = None
) -> str:
    """The summary; requirement IDs link into the rendered contract whose index is ``docs`` (a URL
    or a path; by default the one published with the suite, :func:`published_contract`). ``rerun`` is the
    command that reruns just the violated requirements (conformance/verdict/rerun.py), shown last;
    ``over_claims`` the claims that may be wider than the harness (conformance/verdict/overclaim.py)."""
    run, summary, adapter = report["run"], report["summary"], report["adapter"]
    declaration = adapter["declaration"] or {}
    implementation = declaration.get("implementation")
    made_by = (
        f", implementation {_cell(implementation['name'])} {_cell(implementation['version'])}" if implementation else ""
    )
    lines = [
        f"## Subagent result contract: {_code(adapter['impl'])} {_HEADLINES[run['verdict']]}",
        "",
        f"Exit status {run['exit_status']}. Suite {report['suite']['version']}, spec {report['spec_version']}"
        + made_by
        + f", {run['date']}.",
    ]
    if run.get("incomplete"):  # a signal stopped the run: what follows covers the tests that ran
        lines += ["", f"**Run incomplete**: {_cell(run['incomplete'])}; the adapters were killed, "
                  "and the results below cover only the tests that ran."]  # fmt: skip
    if run.get("error"):
        lines += ["", *_fenced(run["error"])]
        return "\n".join(lines) + "\n"
    docs = docs or published_contract()
    lines += [
        f"Claims: {_claims(declaration)}.",
        *([f"Real products that ran: {_real_products(run['products'])}."] if run.get("products") else []),
        *(f"Release {_cell(line)}." for line in run.get("verified_versions", ())),
        "",
        "| " + " | ".join(summary) + " |",
        "|" + "---|" * len(summary),
        "| " + " | ".join(str(n) for n in summary.values()) + " |",
        "",
    ]
    violated = [r for r in report["requirements"] if r["status"] == "violated"]
    if violated:
        lines += [
            "### Violated requirements",
            "",
            "| requirement | level | title | failing tests |",
            "|---|---|---|---|",
        ]
        rows = [
            f"| {_link(r['id'], docs)} | {r['level']} | {_cell(r['title'])}{_follows(r, docs)} | "
            f"{r['reason'].split()[0]} |"
            for r in violated
        ]
        lines += [*_capped(rows, "requirements"), ""]
    failing = [t for t in report["tests"] if t["outcome"] in ("failed", "error")]
    if failing:
        lines += ["### Failing tests", "", "| test | shows | failure |", "|---|---|---|"]
        rows = [
            f"| {_code(t['nodeid'])} | {', '.join(_link(rid, docs) for rid in t.get('blamed', [])) or '-'} | "
            f"{_cell(t.get('message', ''), 200)} |"
            for t in failing
        ]
        lines += [*_capped(rows, "tests"), "", *first_failures(report)]
    unmet = [r for r in report["requirements"] if r["status"] == "not-met"]
    if unmet:
        lines += [
            "### SHOULD requirements not met (reported; they do not decide the verdict)",
            "",
            "| requirement | title | why |",
            "|---|---|---|",
            *_capped(
                [f"| {_link(r['id'], docs)} | {_cell(r['title'])} | {_cell(r['reason'])} |" for r in unmet],
                "requirements",
            ),
            "",
        ]
    gaps = [r for r in report["requirements"] if r["status"] == "expected-failure"]
    if gaps:
        lines += [
            "### Expected failures (known gaps)",
            "",
            "| requirement | title | reason | link |",
            "|---|---|---|---|",
        ]
        for r in gaps:
            entry = r.get("expected", {})
            link = entry.get("link")
            lines.append(
                f"| {_link(r['id'], docs)} | {_cell(r['title'])} | {_cell(entry.get('reason', r['reason']))} | "
                f"{f'[{link}]({link})' if link else '-'} |"
            )
        lines.append("")
    for title, key in (
        ("Stale expected failures", "stale_expected_failures"),
        ("Unused expected failures", "unused_expected_failures"),
    ):
        if run.get(key):
            lines += [f"### {title}", "", *(f"- {_cell(line)}" for line in run[key]), ""]
    if over_claims:
        lines += [
            "### Claims that may be wider than the harness",
            "",
            *(f"- {_cell(line)}" for line in over_claims),
            "",
        ]
    if rerun:
        lines += ["### Rerun just the violated requirements", "", *_fenced(rerun), ""]
    return "\n".join(lines)
