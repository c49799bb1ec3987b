"""The cases of the real-products tier, the recorder of their wire transcripts, and the way a
transcript becomes the input of a pure operation.

``fixtures/recordings/cases.yaml`` says how each product runs and what each case expects;
``record_case`` runs a case against the real product and keeps everything that crossed its
stdio (``fixtures/recordings/<product>/<case>.json``); conformance/replay.py turns such a
transcript into the observations codex_outcome and claude_code_outcome take, so the default
tier can replay real shapes without the products.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.claude_code_oracle import render, root_symbol
from conformance.codex_oracle import CodexOracle
from conformance.diagnostic import stage_categories
from conformance.model_servers import ModelServer
from conformance.products import PRODUCTS, Installed, OfflineRun, describe, offline, work_dir
from conformance.resources import fixtures_dir
from conformance.spec import Problem, Spec, SpecError, schema_problems, schema_validator
from conformance.yamlpos import YamlError, format_path, load_located

Json = Any

SCHEMA = "real-products"
# The flags the Claude Agent SDK passes to the CLI for a streaming query, and the frames it
# handles itself (never yielded to its consumer, so never observed by a provider).
SDK_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
SDK_INTERNAL_TYPES = {"control_request", "control_response", "control_cancel_request", "keep_alive"}
RUN_PLACEHOLDER = "$RUN"
PORT_PLACEHOLDER = "$PORT"


def recordings_dir() -> Path:
    return fixtures_dir() / "recordings"


def cases_file() -> Path:
    return recordings_dir() / "cases.yaml"


def recording_file(product: str, case: str, root: Path | None = None) -> Path:
    return (root or recordings_dir()) / product / f"{case}.json"


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

    @property
    def id(self) -> str:
        return f"{self.product}-{self.name}"


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
            for inner, message in _check_case(spec, product, item):
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


def model_params(case: Case, cwd: Path) -> dict[str, str]:
    """The fake model's parameters: its text, and the absolute path of the file its tool reads."""
    params = {"text": case.model["text"]} if "text" in case.model else {}
    if "tool_file" in case.model:
        params["file_path"] = str(cwd / case.model["tool_file"])
    return params


def prepare(case: Case, installed: Installed, server: ModelServer, folder: Path) -> OfflineRun:
    """The offline run of ``case`` against ``server``, its working directory holding the case's files."""
    run = offline(installed, server.origin, folder, case.args)
    for name, content in case.files.items():
        (run.cwd / name).write_text(content, encoding="utf-8")
    return run


def server_for(case: Case, folder: Path) -> ModelServer:
    """The (not yet started) fake model service of ``case`` run in ``folder``."""
    return ModelServer(PRODUCTS[case.product].model_api, case.model["behaviour"], model_params(case, work_dir(folder)))


# ---- the recorder


class Wire:
    """A product process on pipes, and everything that crossed them, in arrival order."""

    def __init__(self, run: OfflineRun) -> None:
        self.log: list[Json] = []
        self._lock = threading.Lock()
        self._frames: queue.Queue[Json] = queue.Queue()
        self.process = subprocess.Popen(
            run.argv,
            cwd=run.cwd,
            env=run.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _add(self, item: Json) -> None:
        with self._lock:
            self.log.append(item)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            try:
                frame = json.loads(line)
            except ValueError:
                self._add({"stdout_line": line})
                continue
            self._add({"stdout": frame})
            self._frames.put(frame)
        self._add({"stdout_end": True})
        self._frames.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 65536):
            self._add({"stderr": chunk.decode("utf-8", "replace")})

    def send(self, frame: Json) -> None:
        assert self.process.stdin is not None
        self._add({"stdin": frame})
        self.process.stdin.write((json.dumps(frame) + "\n").encode())
        self.process.stdin.flush()

    def next_frame(self, deadline: float) -> Json:
        """The next stdout frame; None when stdout ended. Raises TimeoutError past ``deadline``."""
        try:
            return self._frames.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError("the product sent nothing more before the deadline") from None

    def close(self, grace: float = 5.0) -> None:
        """Close stdin, let the product exit, then end its process group; record how it ended."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for reader in self._readers:
            reader.join(5)
        code = self.process.returncode
        outcome = (
            {"exitCode": code, "signal": None}
            if code >= 0
            else {"exitCode": None, "signal": signal.Signals(-code).name}
        )
        self._add({"exit": outcome})


def dig(value: Json, *keys: str) -> Json:
    """``value[k1][k2]...``, or None where a level is missing or not an object."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _codex_session(spec: Spec, wire: Wire, case: Case, cwd: Path, deadline: float) -> None:
    """Speak the client frames of table client_frames (the ``example`` of each, with the run's
    working directory, mode fields and task) up to the turn's turn/completed."""
    frames = {row["method"]: row["example"] for row in spec.table("codex", "client_frames").rows}
    fields = {row["mode"]: row["fields"] for row in spec.table("codex", "mode_fields").rows}

    def request(method: str, params: Json, ident: int) -> Json:
        wire.send({**copy.deepcopy(frames[method]), "id": ident, **({"params": params} if params is not None else {})})
        while True:
            frame = wire.next_frame(deadline)
            if frame is None:
                raise RecordingError(f"the app-server closed stdout before answering {method}")
            if isinstance(frame, dict) and frame.get("id") == ident and "method" not in frame:
                return frame

    request("initialize", None, 1)
    wire.send(copy.deepcopy(frames["initialized"]))
    started = request("thread/start", {"cwd": str(cwd), "ephemeral": True, **fields[case.mode]}, 2)
    block = copy.deepcopy(frames["turn/start"]["params"]["input"][0])
    task = {"threadId": dig(started, "result", "thread", "id"), "input": [{**block, "text": case.task}]}
    turn = dig(request("turn/start", task, 3), "result", "turn", "id")
    while (frame := wire.next_frame(deadline)) is not None:
        if dig(frame, "method") == "turn/completed" and dig(frame, "params", "turn", "id") == turn:
            return


def _claude_session(spec: Spec, wire: Wire, case: Case, cwd: Path, deadline: float) -> None:
    """Speak as the Agent SDK does: the initialize control request, then the task as a stream-json
    user message; answer any control request the CLI sends with an error (nothing is granted);
    read up to the result message."""
    wire.send({"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize", "hooks": None}})
    sent_task = False
    while (frame := wire.next_frame(deadline)) is not None:
        kind = frame.get("type") if isinstance(frame, dict) else None
        if kind == "control_response" and not sent_task:
            message = {"role": "user", "content": [{"type": "text", "text": case.task}]}
            wire.send({"type": "user", "message": message, "parent_tool_use_id": None, "session_id": ""})
            sent_task = True
        elif kind == "control_request":
            request_id = frame.get("request_id")
            error = {"subtype": "error", "request_id": request_id, "error": "the recorder grants nothing"}
            wire.send({"type": "control_response", "response": error})
        elif kind == "result":
            return


class RecordingError(Exception):
    """A real run did not go as a recording needs (the product closed early, or hung)."""


def running_as_root() -> bool:
    """Whether the products run here as root (what an ``as_root`` case needs)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _sanitize(value: Any, replacements: list[tuple[str, str]]) -> Any:
    """Every string with the run's folder and the fake service's port replaced by placeholders."""
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_sanitize(v, replacements) for v in value]
    if isinstance(value, dict):
        return {k: _sanitize(v, replacements) for k, v in value.items()}
    return value


def product_argv(case: Case, run: OfflineRun) -> list[str]:
    """The full command of a recorded run: Claude Code gets the flags the Agent SDK adds (for
    bypassPermissions also --allow-dangerously-skip-permissions, as allowDangerouslySkipPermissions,
    which a provider must set for that mode, makes it)."""
    if case.product != "claude-code":
        return run.argv
    bypass = ["--allow-dangerously-skip-permissions"] if case.mode == "bypassPermissions" else []
    return [*run.argv, *SDK_FLAGS, "--permission-mode", case.mode, *bypass]


def record_case(spec: Spec, case: Case, installed: Installed, folder: Path, timeout: float = 60.0) -> Json:
    """Run ``case`` against the real product and return its recording (not yet written)."""
    if case.as_root and not running_as_root():
        raise RecordingError(f"{case.id} ({case.where}) records what the product does as root; run it as root")
    folder.mkdir(parents=True, exist_ok=True)
    with server_for(case, folder) as server:
        run = prepare(case, installed, server, folder)
        run = OfflineRun(product_argv(case, run), run.env, run.cwd)
        try:
            wire = Wire(run)
        except OSError as exc:
            raise RecordingError(f"{case.id}: cannot start {run.argv[0]}: {exc}") from None
        try:
            session = _codex_session if case.product == "codex" else _claude_session
            session(spec, wire, case, run.cwd, time.monotonic() + timeout)
        except TimeoutError as exc:
            raise RecordingError(f"{case.id}: {exc} ({timeout:g} s)") from None
        except OSError as exc:  # the product closed its stdin: it died mid-session
            raise RecordingError(f"{case.id}: the product stopped reading its stdin: {exc}") from None
        finally:
            wire.close()
        requests = [{"method": r.method, "path": r.path} for r in server.requests]
        port = str(server.port)
    replacements = [(str(folder), RUN_PLACEHOLDER), (f"127.0.0.1:{port}", f"127.0.0.1:{PORT_PLACEHOLDER}")]
    about = describe(installed)
    recording = {
        "product": case.product,
        "case": case.name,
        "package": about["package"],
        "version": about["version"],
        "product_version": about["product_version"],
        "argv": [Path(run.argv[0]).name, *run.argv[1:]],
        "mode": case.mode,
        "model_requests": requests,
        "wire": wire.log,
    }
    sanitized: Json = _sanitize(recording, replacements)
    return sanitized


def write_recording(recording: Json, root: Path | None = None) -> Path:
    path = recording_file(recording["product"], recording["case"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recording, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


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
