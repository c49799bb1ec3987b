"""Scenario scripts of the process tier: loaded, validated, and turned into runs of a fake product.

A scenario says how a fake product behaves on real pipes and what the provider must report;
``fixtures/scenarios/<product>.yaml`` holds them, ``spec/schema/scenario.json`` their shape. A
bad script is a test-suite bug, so it is rejected as a whole with file, line and field.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.spec import Problem, Spec, SpecError, schema_problems, schema_validator
from conformance.spec.resources import fixtures_dir
from conformance.spec.yamlpos import Located, YamlError, format_path, load_located

Json = Any

FAKES = {"claude-code": "fake_claude_code.py", "codex": "fake_codex.py"}
# Every canary the suite plants contains this; no sentence of the diagnostic grammar does.
CANARY = "SECRET_"


@dataclass(frozen=True)
class Scenario:
    """One scenario of a file, with where it came from (for failure messages)."""

    product: str
    name: str
    covers: list[str]
    description: str
    run: Json
    actions: list[Json]
    responders: list[Json]
    expect: Json
    where: str = field(default="")
    for_each_row: str | None = None  # a table of the product's area the scenario is a template over
    plants: list[str] = field(default_factory=list)  # canary_sites the scenario plants in
    batch: str | None = None  # scenarios sharing a batch also run together in one call
    row: int | None = None  # the row of table ``for_each_row`` a template was expanded for

    @property
    def rejected_stages(self) -> set[str]:
        """The stages of the failure lines the scenario's start() and dispose() rejections show."""
        start, found = self.expect["start"], set()
        if isinstance(start, dict):
            found |= {start["rejected"][k]["stage"] for k in ("startup", "teardown") if k in start["rejected"]}
        found |= {d["rejected"]["stage"] for d in self.expect.get("dispose", []) if isinstance(d, dict)}
        return found


def load_scenarios(spec: Spec, file: Path) -> list[Scenario]:
    """Every scenario of ``file``; raises SpecError naming each problem's file:line: field."""
    try:
        located = load_located(file)
    except YamlError as exc:
        raise SpecError([Problem(str(file), exc.line, "(document)", exc.message)]) from None
    problems = schema_problems(located, schema_validator(spec.root, "scenario"), str(file))
    data = located.data
    if not problems:
        known = {r.id for r in spec.requirements()}
        names: dict[str, int] = {}
        for index, item in enumerate(data["scenarios"]):
            path = ("scenarios", index)
            if item["name"] in names:
                problems.append(
                    Problem(
                        str(file),
                        located.line_of((*path, "name")),
                        format_path((*path, "name")),
                        f"duplicate scenario name {item['name']!r} (first at scenario {names[item['name']]})",
                    )
                )
            names.setdefault(item["name"], index)
            for position, rid in enumerate(item["covers"]):
                if rid not in known:
                    where = (*path, "covers", position)
                    problems.append(
                        Problem(str(file), located.line_of(where), format_path(where), f"unknown requirement {rid}")
                    )
            sites = spec.vocabulary("redaction.canary_site").values
            for position, site in enumerate(item.get("plants", [])):
                if site not in sites:
                    where = (*path, "plants", position)
                    problems.append(
                        Problem(str(file), located.line_of(where), format_path(where), f"unknown canary site {site!r}")
                    )
            problems += _rejection_row_problems(spec, data["product"], item, located, str(file), path)
            problems += _unawaited_request_problems(item, located, str(file), path)
    if problems:
        raise SpecError(problems)
    return [
        Scenario(
            product=data["product"],
            name=item["name"],
            covers=item["covers"],
            description=item["description"],
            run=item.get("run", {}),
            actions=item["actions"],
            responders=item.get("responders", []),
            expect=item["expect"],
            for_each_row=item.get("for_each_row"),
            where=f"{file}:{located.line_of(('scenarios', index))}",
            plants=item.get("plants", []),
            batch=item.get("batch"),
        )
        for index, item in enumerate(data["scenarios"])
    ]


def _unawaited_request_problems(item: Json, located: Located, file: str, path: tuple[str | int, ...]) -> list[Problem]:
    """A server request the fake sends has its reply checked (CDX-031), and a reply is recorded
    only while the fake lives: so the script awaits it, bounded, before it goes on or ends.
    Otherwise whether the reply is seen depends on how fast the provider runs."""
    problems = []
    actions = item["actions"]
    for index, action in enumerate(actions):
        frame = action.get("out")
        if not (isinstance(frame, dict) and "id" in frame and "method" in frame):
            continue
        awaited = any(
            later.get("await") == {"id": frame["id"]} and "within_ms" in later for later in actions[index + 1 :]
        )
        if not awaited:
            where = (*path, "actions", index)
            problems.append(
                Problem(
                    file,
                    located.line_of(where),
                    format_path(where),
                    f"the server request {frame['id']!r} is not awaited: add "
                    f"{{await: {{id: {frame['id']}}}, within_ms: 10000}} after it, so that its reply is "
                    "recorded however slowly the provider runs",
                )
            )
    return problems


@dataclass
class PlannedRun:
    """One run of a call: its scenario, the RUN sent, and where its fake records what it saw."""

    scenario: Scenario
    run: Json
    record: Path

    def recorded(self) -> list[Json]:
        return read_record(self.record)


def substitute(value: Json, bound: dict[str, Json]) -> Json:
    """Every whole string "$NAME.key" replaced by that field of ``bound[NAME]`` (the fakes' own syntax)."""
    if isinstance(value, dict):
        return {k: substitute(v, bound) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, bound) for v in value]
    if isinstance(value, str) and value.startswith("$"):
        name, _, key = value[1:].partition(".")
        if name in bound:
            if key not in bound[name]:
                raise KeyError(f"{value!r}: {name} has no {key!r}")
            return bound[name][key]
    return value


def _rejection_row_problems(
    spec: Spec, product: str, item: Json, located: Located, file: str, path: tuple[str | int, ...]
) -> list[Problem]:
    """A rejected start names a row of the product's table startup_rejections by index: it must
    exist and have the form the expectation implies (``plain`` a plain row, ``row`` a line row)."""
    start = item["expect"]["start"]
    rejected = start.get("rejected", {}) if isinstance(start, dict) else {}
    rows = spec.table(product, "startup_rejections").rows
    problems = []
    for key, plain in (("plain", True), ("row", False)):
        if key not in rejected:
            continue
        where = (*path, "expect", "start", "rejected", key)
        index = rejected[key]
        if index >= len(rows):
            message = f"{product}.startup_rejections has {len(rows)} rows; there is no row {index}"
        elif (rows[index]["form"] == "plain") != plain:
            message = f"{product}.startup_rejections row {index} has form {rows[index]['form']!r}, not what {key} needs"
        else:
            continue
        problems.append(Problem(file, located.line_of(where), format_path(where), message))
    return problems


def scenario_file(product: str) -> Path:
    return fixtures_dir() / "scenarios" / f"{product}.yaml"


def fake_argv(product: str, script: Path) -> list[str]:
    """The command that starts the fake ``product`` playing ``script`` (the provider appends its flags)."""
    return [sys.executable, "-I", str(fixtures_dir() / "fakes" / FAKES[product]), "--script", str(script)]


def write_script(scenario: Scenario, folder: Path, record: Path | None = None, wire: Json | None = None) -> Path:
    """The scenario's actions as the JSON script a fake reads; ``record`` is where it logs what it
    saw; ``wire`` is the wire of the product version it plays (the area's ``wire`` at that version)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"{scenario.name}.json"
    payload = {
        "record": str(record) if record else None,
        "actions": scenario.actions,
        "responders": scenario.responders,
        "wire": wire or {},
    }
    script.write_text(json.dumps(payload), encoding="utf-8")
    return script


def read_record(record: Path) -> list[Json]:
    """The lines a fake logged (argv/cwd/pid first, then stdin frames and endings); [] if it never started."""
    if not record.is_file():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]


DEFAULT_MODE = {"claude-code": "dontAsk", "codex": "never"}
DEFAULT_TASK = [{"type": "text", "text": "Summarise the repository."}]


def build_run(scenario: Scenario, folder: Path, wire: Json | None = None) -> tuple[Json, Path]:
    """The RUN (operations.json ``<product>_run``) for ``scenario``, and the record its fake will write.

    ``folder`` is private to this run: it holds the script, the record and the working directory;
    ``wire`` is the wire of the product version the fake speaks.
    """
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "record.jsonl"
    script = write_script(scenario, folder, record, wire)
    overrides = scenario.run
    cwd_kind = overrides.get("cwd", "default")
    cwd: str | None
    if cwd_kind == "none":
        cwd = None
    elif cwd_kind == "missing":
        cwd = str(folder / "no-such-directory")
    elif cwd_kind == "file":
        (folder / "a-file").write_text("not a directory\n", encoding="utf-8")
        cwd = str(folder / "a-file")
    else:
        (folder / "cwd").mkdir(exist_ok=True)
        cwd = str(folder / "cwd")
    run: Json = {
        "argv": fake_argv(scenario.product, script),
        "task": overrides.get("task", DEFAULT_TASK),
        "cwd": cwd,
        "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **overrides.get("env", {})},
        "mode": overrides.get("mode", DEFAULT_MODE[scenario.product]),
        "cancel": overrides.get("cancel"),
        "dispose_after_ms": overrides.get("dispose_after_ms"),
    }
    if overrides.get("faults"):
        run["faults"] = overrides["faults"]
    executable = overrides.get("executable", "fake")
    if executable == "missing":  # the spawn fails with ENOENT
        run["argv"] = [str(folder / "no-such-cli" / "cli")]
    elif executable == "not-executable":  # the spawn fails with EACCES (even for root: no x bit at all)
        cli = folder / "cli"
        cli.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        cli.chmod(0o644)
        run["argv"] = [str(cli)]
    return run, record
