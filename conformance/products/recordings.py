"""The cases of the real-products tier, where their recordings live, what each case expects at each
shipped product version, and reading a recording back.

``fixtures/recordings/cases.yaml`` says how each product runs and what each case expects (at the
base version, and under ``versions`` where a later shipped version does otherwise: data, not
code); conformance/products/recorder.py runs a case against the real product and keeps everything
that crossed its stdio (``fixtures/recordings/<product>/<version>/<case>.json``);
conformance/products/replay.py turns such a transcript into the observations codex_outcome and
claude_code_outcome take, so the default tier can replay real shapes without the products.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.areas.claude_code.oracle import render, root_symbol
from conformance.areas.codex.oracle import CodexOracle
from conformance.areas.diagnostic.oracle import stage_categories
from conformance.spec import Problem, Spec, SpecError, schema_problems, schema_validator
from conformance.spec.resources import fixtures_dir
from conformance.spec.yamlpos import YamlError, format_path, load_located

Json = Any

SCHEMA = "real-products"


def recordings_dir() -> Path:
    return fixtures_dir() / "recordings"


def cases_file() -> Path:
    return recordings_dir() / "cases.yaml"


def recording_file(product: str, version: str, case: str, root: Path | None = None) -> Path:
    """Where the recording of ``case`` run against ``product`` at (npm package) ``version`` lives."""
    return (root or recordings_dir()) / product / version / f"{case}.json"


@dataclass(frozen=True)
class Case:
    """One case of cases.yaml, with its product's run settings."""

    product: str
    name: str
    covers: list[str]
    description: str
    model: dict[str, str]
    expect: Json
    args: list[str]
    mode: str
    task: str
    files: dict[str, str] = field(default_factory=dict)
    where: str = ""
    model_calls: int = 1  # with retries off, one; none where the product fails before calling the model
    as_root: bool = False  # the case is what the product does as root: real runs only as root
    env: dict[str, str] = field(default_factory=dict)  # added to the product's offline environment
    versions: dict[str, Json] = field(default_factory=dict)  # version -> {"expect": ...} where it differs
    version: str = ""  # the product release ``expect`` is of: the base, until ``at``
    base_expect: Json = None  # the expectation at the base version
    recorded: str | None = None  # the recorded release of ``version``'s range (None: its wire was not recorded)

    @property
    def id(self) -> str:
        return f"{self.product}-{self.name}"

    def at(self, spec: Spec) -> Case:
        """The case at the release ``spec`` stands at for its product: the expectation of the newest
        entry of ``versions`` (a range, by its first release) not after that release's range, else
        the base's; ``recorded`` is the release of that range whose recording is replayed."""
        area = spec.areas[self.product]
        current = area.current
        if current is None:
            raise SpecError([Problem(self.where, 0, self.id, f"spec area {self.product!r} covers no product release")])
        expect = self.base_expect
        for entry in area.versions[: area.versions.index(current) + 1]:
            expect = self.versions.get(entry.version, {}).get("expect", expect)
        return dataclasses.replace(self, expect=expect, version=area.version or "", recorded=current.recorded)


# ---- the case file


def stop_reason_of(spec: Spec, product: str, category: str) -> set[str]:
    """The stop reasons the spec gives a failure of ``category`` (one, for a consistent spec)."""
    if product == "codex":
        return {CodexOracle(spec).stop_reason(category)}
    rows = spec.table("claude-code", "result_classification").rows
    return {str(r["stop_reason"]) for r in rows if r.get("category") == category}


def _check_case(spec: Spec, product: str, item: Json) -> list[tuple[tuple[str | int, ...], str]]:
    """What is wrong with one case beyond its shape: (path inside the case, message)."""
    wrong: list[tuple[tuple[str | int, ...], str]] = []
    known = {r.id for r in spec.requirements()}
    wrong += [(("covers", i), f"unknown requirement {rid}") for i, rid in enumerate(item["covers"]) if rid not in known]
    expect = item["expect"]
    stops = spec.vocabulary("results.stop_reason").values
    if expect["stopReason"] not in stops:
        wrong.append((("expect", "stopReason"), f"{expect['stopReason']!r} is not in vocabulary results.stop_reason"))
    if item["model"].get("behaviour") == "tool-use-loop" and "tool_file" not in item["model"]:
        wrong.append((("model",), "tool-use-loop needs tool_file (the file the requested tool reads)"))
    failure = expect.get("failure")
    if failure is None:
        if not isinstance(expect.get("output_text"), str):
            wrong.append((("expect",), "a case without failure facts must give output_text (the completed answer)"))
        return wrong
    pairs = stage_categories(spec, _label(spec, product), "run-result")
    if (failure["stage"], failure["category"]) not in pairs:
        wrong.append(
            (
                ("expect", "failure"),
                f"stage {failure['stage']!r} with category {failure['category']!r} is no run-result "
                f"pair of table {product}.stages",
            )
        )
    elif {expect["stopReason"]} != stop_reason_of(spec, product, failure["category"]):
        wrong.append(
            (
                ("expect", "stopReason"),
                f"the spec gives category {failure['category']!r} stop reason "
                f"{sorted(stop_reason_of(spec, product, failure['category']))}, not {expect['stopReason']!r}",
            )
        )
    return wrong


def _check_versions(spec: Spec, product: str, item: Json) -> list[tuple[tuple[str | int, ...], str]]:
    """Each ``versions`` entry names a range of the spec (by its first release) and holds an
    expectation the spec at that range allows; and at every range, a Codex case's expected failure
    is the form the spec's wire facts give its model behaviour (``wire.failures``), where they give one."""
    wrong: list[tuple[tuple[str | int, ...], str]] = []
    area = spec.areas[product]
    shipped = list(area.shipped)
    for version, entry in item.get("versions", {}).items():
        covering = area.entry_for(version)
        if covering is None:
            wrong.append((("versions", version), f"{product} {version} is not covered (ranges: {area.ranges})"))
        elif covering.version != version:
            wrong.append(
                (("versions", version), f"{version} is inside the range {covering.span}: name it by its first release")
            )
        elif version == shipped[0]:
            wrong.append(
                (("versions", version), f"{version} is the base version: its expectation is the case's expect")
            )
        else:
            inner = _check_case(spec.at({product: version}), product, {**item, "expect": entry["expect"]})
            wrong += [(("versions", version, *where), message) for where, message in inner if where[:1] == ("expect",)]
    if product != "codex":
        return wrong
    source: tuple[str | int, ...] = ("expect",)
    expect = item["expect"]
    for version in shipped:
        if version in item.get("versions", {}) and version != shipped[0]:
            expect, source = item["versions"][version]["expect"], ("versions", version, "expect")
        failures = spec.at({product: version}).areas[product].wire.get("failures", {})
        behaviour = item["model"]["behaviour"]
        if behaviour in failures and expect.get("failure") is not None:
            form = codex_wire_form(spec.at({product: version}), expect)
            if form != failures[behaviour]:
                wrong.append(
                    (
                        source,
                        f"at {product} {version} the spec's wire facts give {behaviour} the codexErrorInfo "
                        f"{json.dumps(failures[behaviour])}; the case expects {json.dumps(form)}",
                    )
                )
    return wrong


def codex_wire_form(spec: Spec, expect: Json) -> Json:
    """The codexErrorInfo an expected failure is on the wire, by table variants (an HTTP-status
    variant with the expected status); None for a completed turn or a category no row maps."""
    failure = expect.get("failure")
    if failure is None:
        return None
    rows = [r for r in spec.table("codex", "variants").rows if r["variant"] == failure["category"]]
    if not rows:
        return None
    [row] = rows
    if row["keeps_http_status"]:
        return {row["variant"]: {"httpStatusCode": failure.get("httpStatus")}}
    return row["wire"]


def _label(spec: Spec, product: str) -> str:
    """The product's label in the diagnostic line (table diagnostic.products)."""
    [row] = [r for r in spec.table("diagnostic", "products").rows if r["area"] == product]
    return str(row["product"])


def load_cases(spec: Spec, file: Path | None = None) -> list[Case]:
    """Every case of ``file`` (default: the shipped cases.yaml); raises SpecError naming file:line: field."""
    file = file or cases_file()
    try:
        located = load_located(file)
    except YamlError as exc:
        raise SpecError([Problem(str(file), exc.line, "(document)", exc.message)]) from None
    problems = schema_problems(located, schema_validator(spec.root, SCHEMA), str(file))
    if problems:
        raise SpecError(problems)
    cases: list[Case] = []
    for product, settings in located.data["products"].items():
        base: tuple[str | int, ...] = ("products", product)
        modes = spec.vocabulary(f"{product}.permission_mode").values
        if settings["mode"] not in modes:
            where = (*base, "mode")
            problems.append(
                Problem(
                    str(file),
                    located.line_of(where),
                    format_path(where),
                    f"{settings['mode']!r} is not in vocabulary {product}.permission_mode",
                )
            )
        seen: set[str] = set()
        for index, item in enumerate(settings["cases"]):
            path = (*base, "cases", index)
            mode = item.get("mode", settings["mode"])
            if "mode" in item and mode not in modes:
                where = (*path, "mode")
                problems.append(
                    Problem(
                        str(file),
                        located.line_of(where),
                        format_path(where),
                        f"{mode!r} is not in vocabulary {product}.permission_mode",
                    )
                )
            if item["name"] in seen:
                problems.append(
                    Problem(
                        str(file),
                        located.line_of((*path, "name")),
                        format_path((*path, "name")),
                        f"duplicate case name {item['name']!r}",
                    )
                )
            seen.add(item["name"])
            for inner, message in _check_case(spec, product, item) + _check_versions(spec, product, item):
                where = (*path, *inner)
                problems.append(Problem(str(file), located.line_of(where), format_path(where), message))
            cases.append(
                Case(
                    product=product,
                    name=item["name"],
                    covers=list(item["covers"]),
                    description=item["description"],
                    model=dict(item["model"]),
                    expect=item["expect"],
                    args=[*settings["args"], *item.get("args", [])],
                    mode=mode,
                    task=settings["task"],
                    files=dict(settings.get("files", {})),
                    where=f"{file}:{located.line_of(path)}",
                    model_calls=int(item.get("model_calls", 1)),
                    as_root=bool(item.get("as_root", False)),
                    env=dict(item.get("env", {})),
                    versions=dict(item.get("versions", {})),
                    version=spec.areas[product].version or "",
                    base_expect=item["expect"],
                )
            )
    if problems:
        raise SpecError(problems)
    return cases


# ---- what a case expects, by the spec's format rules


def expected_results(spec: Spec, case: Case) -> list[Json]:
    """The SubagentResults the spec gives the case: its stop reason, its output and, for a failure,
    the diagnostic line rendered from the failure facts by the product's oracle; where the case
    races the exit against the frame that decides the run (``outcome_optional``), also the line
    without the exit's outcome."""
    expect = case.expect
    text = expect.get("output_text")
    result: Json = {
        "stopReason": expect["stopReason"],
        "output": [] if text is None else [{"type": "text", "text": text}],
    }
    failure = expect.get("failure")
    if failure is None:
        return [result]
    variants = [failure]
    if failure.get("outcome_optional"):
        variants.append({k: v for k, v in failure.items() if k not in ("exitCode", "signal")})
    return [{**result, "diagnostic": _failure_line(spec, case.product, facts)} for facts in variants]


def _failure_line(spec: Spec, product: str, failure: Json) -> str:
    if product == "codex":
        return CodexOracle(spec).failure_line(
            failure["stage"],
            failure["category"],
            failure.get("httpStatus"),
            failure.get("exitCode"),
            failure.get("signal"),
        )
    values: Json = {
        "stage": failure["stage"],
        "categories": failure["category"],
        "integer": failure.get("exitCode"),
        "diagnostic.signal": failure.get("signal"),
    }
    return render(spec, root_symbol(spec, "run-result"), values)


def dig(value: Json, *keys: str) -> Json:
    """``value[k1][k2]...``, or None where a level is missing or not an object."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def missing_recordings(spec: Spec, root: Path | None = None) -> list[str]:
    """Every (case, recorded release of a range) without a recording under ``root``, each named with
    its file and the command that records it."""
    return [
        f"{recording_file(case.product, version, case.name, root)}: run `subagent-conformance products record "
        f"--product {case.product} --version {version} --case {case.name}`"
        for case in load_cases(spec)
        for version in spec.areas[case.product].recorded
        if not recording_file(case.product, version, case.name, root).is_file()
    ]


def load_recording(spec: Spec, path: Path) -> Json:
    """A recording, checked against its schema (a malformed one names its file and field)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecError([Problem(str(path), 1, "(document)", f"not a readable JSON recording: {exc}")]) from None
    validator = schema_validator(spec.root, SCHEMA).evolve(
        schema={"$ref": "urn:subagent-conformance:spec:real-products#/$defs/recording"}
    )
    problems = [
        Problem(str(path), 1, format_path(tuple(e.absolute_path)), e.message) for e in validator.iter_errors(data)
    ]
    if problems:
        raise SpecError(problems)
    return data
