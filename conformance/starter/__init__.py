"""``subagent-conformance init``: a harness's starting point (issue #30, item 2). It writes an
adapter skeleton (Python, or JavaScript typed by the generated TypeScript types), a
``known-gaps.yaml`` for ``--expected-failures``, the GitHub workflow that uses the action, and the
constraints file of the dependency versions the suite was tested with.

The stubs come from the spec's operations table (one per operation, its input and output as the
table words them), so that a new operation reaches the starter with the spec; every stub answers
"not implemented", which the suite reports as that operation's failure, never a crash. Nothing
that exists is overwritten."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance.docs.typescript import STARTER_TYPES, type_name
from conformance.spec import Spec
from conformance.spec.resources import PACKAGE

TEMPLATES = Path(__file__).resolve().parent / "templates"
CONSTRAINTS = Path(__file__).resolve().parent / "constraints.txt"  # recorded by record_constraints
LANGUAGES = ("python", "typescript")
_OPERATIONS_ID = "urn:subagent-conformance:spec:operations"


class StarterError(Exception):
    """What init refuses to do (a file it would overwrite, a language it does not know)."""


@dataclass(frozen=True)
class Operation:
    name: str
    tier: str
    input: str
    output: str


def operations(spec: Spec) -> list[Operation]:
    """The operations of table adapter-protocol.operations, in its order."""
    table = spec.areas["adapter-protocol"].tables["operations"]
    return [Operation(row["operation"], row["tier"], row["input"], row["output"]) for row in table.rows]


def _wrapped(text: str, prefix: str, width: int = 96) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(prefix) + len(line) + 1 + len(word) > width:
            lines.append(prefix + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, prefix + line] if line else lines


def python_adapter(spec: Spec) -> str:
    stubs = []
    for op in operations(spec):
        stubs += [
            "",
            "",
            f"def {op.name}(request: JSON) -> JSON:",
            f'    """{op.tier} operation. Input (operations.json#/$defs/{op.name}_input):',
            *_wrapped(op.input, "    "),
            f"    Output (operations.json#/$defs/{op.name}_output):",
            *_wrapped(op.output, "    "),
            '    """',
            f'    raise NotImplementedError("{op.name} is not implemented yet")',
        ]
    return (TEMPLATES / "adapter.py").read_text(encoding="utf-8").replace("# {stubs}\n", "\n".join(stubs)[2:] + "\n")


def typescript_adapter(spec: Spec) -> str:
    stubs = []
    for op in operations(spec):
        stubs += [
            "",
            "/**",
            f" * {op.tier} operation. Input:",
            *_wrapped(op.input, " *   "),
            " * Output:",
            *_wrapped(op.output, " *   "),
            f' * @param {{import("./operations").{type_name(_OPERATIONS_ID, op.name + "_input")}}} input',
            f' * @returns {{import("./operations").{type_name(_OPERATIONS_ID, op.name + "_output")}}}',
            " */",
            f"function {op.name}(input) {{",
            f'  throw new NotImplemented("{op.name}");',
            "}",
        ]
    listing = "\n  ".join(f"{op.name}," for op in operations(spec))
    text = (TEMPLATES / "adapter.mjs").read_text(encoding="utf-8")
    return text.replace("// {stubs}\n", "\n".join(stubs)[1:] + "\n").replace("/* {operations} */", listing)


def _shipped_types() -> Path:
    """The generated operations.d.ts: under the wheel's docs, or a checkout's docs/."""
    for docs in (PACKAGE / "_data" / "docs", PACKAGE.parent / "docs"):
        if (docs / STARTER_TYPES).is_file():
            return docs / STARTER_TYPES
    raise StarterError(
        f"the generated {STARTER_TYPES} is missing from this installation: run subagent-conformance docs"
    )


def _action_reference() -> str:
    """owner/repo@ref of the action this version of the suite is (its Source URL, its version's tag)."""
    try:
        meta = metadata.metadata("subagent-conformance")
    except metadata.PackageNotFoundError:
        return "OWNER/subagent-conformance@REF"
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [] if ", " in entry)
    source = urls.get("Source", "").removeprefix("https://github.com/").strip("/")
    return f"{source or 'OWNER/subagent-conformance'}@v{meta['Version']}"


def starter_files(spec: Spec, lang: str) -> dict[str, str]:
    """Every file init writes, by its name in the target folder."""
    if lang not in LANGUAGES:
        raise StarterError(f"--lang {lang!r}: one of {', '.join(LANGUAGES)}")
    impl = "adapter" if lang == "python" else "exec:node adapter.mjs"
    workflow = (TEMPLATES / "conformance.yml").read_text(encoding="utf-8")
    files = {
        "known-gaps.yaml": (TEMPLATES / "known-gaps.yaml").read_text(encoding="utf-8"),
        ".github/workflows/conformance.yml": workflow.replace("{action}", _action_reference()).replace("{impl}", impl),
        "constraints.txt": CONSTRAINTS.read_text(encoding="utf-8"),
    }
    if lang == "python":
        files["adapter.py"] = python_adapter(spec)
    else:
        files["adapter.mjs"] = typescript_adapter(spec)
        files["operations.d.ts"] = _shipped_types().read_text(encoding="utf-8")
        files["tsconfig.json"] = (TEMPLATES / "tsconfig.json").read_text(encoding="utf-8")
    return files


def write_starter(spec: Spec, lang: str, target: Path) -> list[Path]:
    """Write the starter into ``target``; refuse, writing nothing, if any of its files exists."""
    files = starter_files(spec, lang)
    there = sorted(name for name in files if (target / name).exists())
    if there:
        raise StarterError(
            f"{target} already has {', '.join(there)}: init overwrites nothing (move them, or init another folder)"
        )
    written = []
    for name, text in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _requirements(name: str, extras: frozenset[str] = frozenset()) -> list[Any]:
    from packaging.requirements import Requirement

    found = []
    for text in metadata.requires(name) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras or {""}):
            found.append(requirement)
    return found


def record_constraints(path: Path = CONSTRAINTS) -> str:
    """Write the versions of the suite's runtime dependencies (and theirs) installed here: run in
    the venv whose tests just passed (.ci/run does), they are the versions the suite was tested with."""
    seen: dict[str, str] = {}
    todo = [(r.name, frozenset(r.extras)) for r in _requirements("subagent-conformance")]
    while todo:
        name, extras = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen and not extras:
            continue
        try:
            seen[key] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        todo += [(r.name, frozenset(r.extras)) for r in _requirements(name, extras)]
    text = (
        "# The dependency versions subagent-conformance was tested with (its runtime requirements and\n"
        "# theirs): pip install --constraint constraints.txt ... Recorded by the project's CI after a\n"
        "# green run (python -m conformance.starter); generated, do not edit.\n"
        + "".join(f"{name}=={version}\n" for name, version in sorted(seen.items()))
    )
    path.write_text(text, encoding="utf-8")
    return text
