"""The human form of the upgrade gate's reports: a covered release against its entry
(conformance/products/upgrade.py), a release the spec does not cover against its neighbours
(conformance/products/release.py)."""

from __future__ import annotations

import json
from typing import Any

Json = Any


def render(report: Json) -> str:
    """The human form of an upgrade-check report."""
    version, near = report["version"], report["nearest"]
    made = f" ({report['product_version']})" if "product_version" in report else ""
    lines = [
        f"upgrade-check {report['product']}: {report['package']} {version}{made}; the spec ships "
        f"{', '.join(report['shipped_versions'])}; compared with "
        + (f"its entry {near}" if report["shipped"] else f"the nearest shipped version {near}")
    ]
    for union in report["unions"]:
        changed = union["added"] or union["removed"]
        lines.append(
            f"{union['name']} -> spec vocabulary {union['vocabulary']} ({union['source']}): "
            + ("DIFFERS" if changed else f"unchanged, {len(union['official'])} members")
        )
        lines += [f"  + {m}" for m in union["added"]]
        lines += [f"  - {m}" for m in union["removed"]]
        lines += [f"  note: {n}" for n in union.get("notes", [])]
    claim = json.dumps({"providers": {report["product"]: version if report["shipped"] else near}})
    if report["shipped"] and report["equal"]:
        lines.append(f"SHIPPED: {version} is shipped and its official unions agree with its entry; claim it ({claim})")
    elif report["shipped"]:
        lines.append(
            f"SHIPPED, DIFFERS: the spec's entry for {version} does not match the product's official unions; "
            "report this to the suite's maintainers"
        )
    else:
        lines.append(
            f"NOT SHIPPED: this spec does not ship {version}"
            + (f"; wrote a draft versions entry to {report['draft']}" if "draft" in report else "")
        )
        lines.append("Decisions a person must take before it ships (placeholders in the draft):")
        lines += [f"  {n}. {line}" for n, line in enumerate(report["decisions"], 1)]
        lines.append(
            "Open an issue or pull request on the suite with the draft and the evidence for each decision; "
            f"until it ships, claim a shipped version ({claim})."
        )
    return "\n".join(lines)


def render_release(report: Json) -> str:
    """The human form of a release check."""
    version, product = report["version"], report["product"]
    neighbours = report["covered_neighbours"]
    lines = [
        f"upgrade-check {product}: {report['package']} {version}, which the spec does not cover; compared with "
        f"the covered neighbour(s) {', '.join(neighbours) or 'none'}"
    ]
    for near, seen in report["compared"].items():
        changes = seen["changes"]
        lines.append(f"against {near}: " + ("unions equal" if not changes else f"{len(changes)} change(s)"))
        lines += [f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})" for c in changes]
    for c in report["unread_changes"]:
        lines.append(f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})")
    if report["wire"] == "not checked":
        lines.append("wire: not checked (the unions were read offline with --from, or differ from every neighbour's)")
    else:
        for case in report["wire"]:
            state = "reads the same" if case["reading_equal"] else "DIFFERS"
            lines.append(f"wire {case['case']}: {case.get('skipped') or state}")
            lines += [f"  {'READ' if c['read'] else 'not read'}: {c['what']} ({c['why']})" for c in case["changes"]]
    near = report["equivalent_to"]
    if near is not None:
        lines.append(f"EQUIVALENT: nothing the contract reads changed; {version} is tested as {near}")
        if "versions_file" in report:
            lines.append(
                f"wrote {report['versions_file']}; claim {product} {version} and run "
                f"`python -m pytest --pyargs conformance --product-versions={report['versions_file']} ...`"
            )
        else:
            lines.append("pass --write-versions FILE to record it, then run pytest with --product-versions=FILE")
        return "\n".join(lines)
    lines.append(
        f"CHANGED: {version} changes what the contract reads"
        + (f"; wrote a draft versions entry to {report['draft']}" if "draft" in report else "")
    )
    if report.get("carried"):
        lines.append("Carried from the spec's other entries: " + ", ".join(report["carried"]))
    lines.append("Decisions a person must take before it ships (placeholders in the draft):")
    lines += [f"  {n}. {line}" for n, line in enumerate(report["decisions"], 1)]
    return "\n".join(lines)
