"""The recorder of the real-products tier: runs a case of cases.yaml against the real product,
offline against a fake model service, and keeps everything that crossed its stdio (for Claude
Code, run by the real Agent SDK: also every message its query() yielded and what it threw).

What a case is and expects, and where its recording is written, are conformance/products/recordings.py.
A recording has the run's folder and the fake service's port replaced by placeholders, so that
it is shipped and replayed without naming the machine that made it.
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
from pathlib import Path
from typing import Any

from conformance.products.model_servers import ModelServer
from conformance.products.packages import (
    PRODUCTS,
    Installed,
    OfflineRun,
    ProductError,
    describe,
    offline,
    work_dir,
)
from conformance.products.recordings import Case, dig, recording_file
from conformance.products.sdk_run import DRIVER, sdk_log
from conformance.spec import Spec

Json = Any

RUN_PLACEHOLDER = "$RUN"
PORT_PLACEHOLDER = "$PORT"


def model_params(case: Case, cwd: Path) -> dict[str, str]:
    """The fake model's parameters: its text, and the absolute path of the file its tool reads."""
    params = {"text": case.model["text"]} if "text" in case.model else {}
    if "tool_file" in case.model:
        params["file_path"] = str(cwd / case.model["tool_file"])
    return params


def prepare(case: Case, installed: Installed, server: ModelServer, folder: Path) -> OfflineRun:
    """The offline run of ``case`` against ``server``: its working directory holds the case's files,
    its environment the case's variables."""
    run = offline(installed, server.origin, folder, case.args)
    run = OfflineRun(run.argv, {**run.env, **case.env}, run.cwd)
    for name, content in case.files.items():
        (run.cwd / name).write_text(content, encoding="utf-8")
    return run


def server_for(case: Case, folder: Path) -> ModelServer:
    """The (not yet started) fake model service of ``case`` run in ``folder``."""
    return ModelServer(PRODUCTS[case.product].model_api, case.model["behaviour"], model_params(case, work_dir(folder)))


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


def record_case(spec: Spec, case: Case, installed: Installed, folder: Path, timeout: float = 60.0) -> Json:
    """Run ``case`` against the real product and return its recording (not yet written): Codex's
    app-server spoken to as table client_frames says, Claude Code through the real Agent SDK's
    query() (conformance/products/sdk_run.py)."""
    if case.as_root and not running_as_root():
        raise RecordingError(f"{case.id} ({case.where}) records what the product does as root; run it as root")
    folder.mkdir(parents=True, exist_ok=True)
    client: Json = None
    with server_for(case, folder) as server:
        run = prepare(case, installed, server, folder)
        if case.product == "claude-code":
            argv, log, client = _sdk_session(case, installed, run, folder, timeout)
        else:
            argv, log = run.argv, _codex_wire(spec, case, run, timeout)
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
        "argv": [Path(argv[0]).name, *argv[1:]],
        **({"client": client} if client is not None else {}),
        "mode": case.mode,
        "model_requests": requests,
        "wire": log,
    }
    sanitized: Json = _sanitize(recording, replacements)
    return sanitized


def _codex_wire(spec: Spec, case: Case, run: OfflineRun, timeout: float) -> list[Json]:
    try:
        wire = Wire(run)
    except OSError as exc:
        raise RecordingError(f"{case.id}: cannot start {run.argv[0]}: {exc}") from None
    try:
        _codex_session(spec, wire, case, run.cwd, time.monotonic() + timeout)
    except TimeoutError as exc:
        raise RecordingError(f"{case.id}: {exc} ({timeout:g} s)") from None
    except OSError as exc:  # the product closed its stdin: it died mid-session
        raise RecordingError(f"{case.id}: the product stopped reading its stdin: {exc}") from None
    finally:
        wire.close()
    return wire.log


def _sdk_session(
    case: Case, installed: Installed, run: OfflineRun, folder: Path, timeout: float
) -> tuple[list[str], list[Json], Json]:
    """The case through the real SDK: the CLI command the SDK spawned, the driver's log without
    that spawn, and what ran the CLI (the SDK's package and version, the names of the CLI's
    environment variables and the values of those the SDK set itself)."""
    try:
        log, _ = sdk_log(installed, run, case.mode, case.task, folder, timeout)
    except ProductError as exc:
        raise RecordingError(f"{case.id}: {exc}") from None
    spawns = [item["spawn"] for item in log if "spawn" in item]
    if len(spawns) != 1:
        raise RecordingError(f"{case.id}: the Agent SDK spawned the CLI {len(spawns)} times; a run spawns it once")
    [spawn] = spawns
    if Path(spawn["command"]).resolve() != installed.binary.resolve():
        raise RecordingError(f"{case.id}: the Agent SDK ran {spawn['command']}, not its bundled CLI {installed.binary}")
    client = {
        "driver": DRIVER.name,
        "sdk": f"{installed.package}@{installed.version}",
        "env": spawn["env_keys"],
        "sdk_env": spawn["env_added"],
    }
    return [spawn["command"], *spawn["args"]], [item for item in log if "spawn" not in item], client


def write_recording(recording: Json, root: Path | None = None) -> Path:
    path = recording_file(recording["product"], recording["version"], recording["case"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recording, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
