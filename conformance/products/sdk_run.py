"""Claude Code as a provider ships it: the real ``@anthropic-ai/claude-agent-sdk`` ``query()``, in
JavaScript under Node, at the installed SDK version, driving the CLI it bundles.

``sdk_log`` runs one case through conformance/products/sdk_driver.mjs against the fake Anthropic
service and returns what the driver observed, in order: what the SDK spawned, the stream-json the
SDK and the CLI exchanged, the CLI's stderr, every message ``query()`` yielded, what its
iteration threw, and how the CLI exited. The real tier and ``products record`` record Claude Code
through it; nothing here restates the SDK's wire.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.products.packages import Installed, OfflineRun, ProductError, run_command

Json = Any

DRIVER = Path(__file__).with_name("sdk_driver.mjs")
# The CLI flags a case gives (cases.yaml ``args``, and --model from packages.offline), as the
# query() options a provider sets instead: (option, how its value is read).
OPTIONS: dict[str, tuple[str, Callable[[str], Json]]] = {
    "--model": ("model", str),
    "--max-turns": ("maxTurns", int),
    "--allowedTools": ("allowedTools", lambda value: value.split(",")),
    "--resume": ("resume", str),
}
# What the driver writes besides the log items (its last line).
END = "driver_end"


def sdk_entry(installed: Installed) -> Path:
    """The SDK's ES module entry point (``exports["."]`` of its package.json, else ``main``)."""
    manifest = installed.package_dir / "package.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProductError(f"{installed.package}@{installed.version}: unreadable {manifest}: {exc}") from None
    exported = data.get("exports", {}).get(".", {})
    entry = exported.get("default") if isinstance(exported, dict) else exported
    return installed.package_dir / str(entry or data.get("main") or "sdk.mjs")


def query_options(args: list[str], mode: str, cwd: Path, env: dict[str, str]) -> Json:
    """query()'s options for a run given as CLI flags: each flag as its option, the permission mode
    (bypassPermissions with allowDangerouslySkipPermissions, which the SDK needs for it), the
    working directory and the whole environment (the SDK passes ``env`` to the CLI as it is)."""
    options: Json = {"cwd": str(cwd), "env": env, "permissionMode": mode}
    if mode == "bypassPermissions":
        options["allowDangerouslySkipPermissions"] = True
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag not in OPTIONS or not rest:
            raise ProductError(f"no query() option for the CLI argument {flag!r} (known: {', '.join(OPTIONS)})")
        name, read = OPTIONS[flag]
        options[name] = read(rest.pop(0))
    return options


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise ProductError("node is not on PATH: Claude Code runs through the Agent SDK under Node.js 18 or newer")
    return found


def sdk_log(
    installed: Installed,
    run: OfflineRun,
    mode: str,
    prompt: str,
    folder: Path,
    timeout: float = 60.0,
    wrap: list[str] | None = None,
) -> tuple[list[Json], str]:
    """Run ``prompt`` through the real SDK's query() with ``run``'s CLI flags, environment and
    working directory (``wrap``: a command the driver runs under, such as strace); the driver's
    log items (without its last line) and its stderr. Raises ProductError when the driver itself
    fails (no node, a module that will not load, a hang)."""
    config = {
        "sdk": str(sdk_entry(installed)),
        "prompt": prompt,
        "options": query_options(run.argv[1:], mode, run.cwd, run.env),
        "deny": mode != "bypassPermissions",  # the provider's canUseTool, in every mode but bypassPermissions
        "timeout_ms": int(timeout * 1000),
    }
    file = folder / "sdk-driver.json"
    file.write_text(json.dumps(config), encoding="utf-8")
    env = {"PATH": run.env["PATH"], "HOME": run.env["HOME"], "LANG": "C.UTF-8", "NODE_NO_WARNINGS": "1"}
    try:
        done = run_command([*(wrap or []), node(), str(DRIVER), str(file)], timeout + 15, run.cwd, env)
    except ProductError:
        raise ProductError(f"the Agent SDK driver did not finish within {timeout + 15:g} s") from None
    out, err = done.stdout, done.stderr
    try:
        items = [json.loads(line) for line in out.splitlines() if line.strip()]
    except ValueError:
        items = []
    if done.returncode != 0 or not items or END not in items[-1]:
        raise ProductError(
            f"the Agent SDK driver ({DRIVER.name}) failed (exit {done.returncode}):\n{err.strip()[-3000:]}"
        )
    return items[:-1], err
