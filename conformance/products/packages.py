"""The real products, installed from npm into a cache folder, and how to run them offline.

``install`` puts one npm package version (by default the version the spec is at: ``versions`` in
spec/codex.yaml and spec/claude-code.yaml) into ``<cache>/<package>@<version>`` and finds the
native binary in it; a second call is a no-op. ``offline`` configures a run so that the
product talks only to a fake model service on 127.0.0.1, with its retries off: Codex through a
temporary CODEX_HOME whose config.toml names the fake provider, Claude Code through its
environment. Both are shared by the real tier, ``products record`` and ``upgrade-check``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec import Spec

CACHE_VARIABLE = "SUBAGENT_CONFORMANCE_PRODUCTS"
MARKER = "subagent-conformance-install.json"
NPM_TIMEOUT = 900.0
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
DIST_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")


class ProductError(Exception):
    """A product cannot be installed, found or run; the message says what to do."""


@dataclass(frozen=True)
class Product:
    """What the suite knows of one product: where npm puts its native binary, which model API
    it calls, and how to make it talk only to a fake service."""

    name: str  # the spec area that locks it
    binary_globs: tuple[str, ...]  # under node_modules: the platform package npm selected
    model_api: str  # conformance.products.model_servers API name


PRODUCTS: dict[str, Product] = {
    "codex": Product(
        "codex",
        # An npm alias of the platform build, e.g. @openai/codex-linux-x64 -> @openai/codex@0.147.0-linux-x64.
        ("@openai/codex-*/vendor/*/bin/codex", "@openai/codex-*/vendor/*/bin/codex.exe"),
        "openai-responses",
    ),
    "claude-code": Product(
        "claude-code",
        # The optional dependency selected by platform and libc; it holds only the binary.
        ("@anthropic-ai/claude-agent-sdk-*/claude", "@anthropic-ai/claude-agent-sdk-*/claude.exe"),
        "anthropic-messages",
    ),
}


@dataclass(frozen=True)
class Installed:
    """One installed product version."""

    product: str
    package: str
    version: str
    folder: Path
    binary: Path
    product_version: str  # what the binary says of itself (``--version``)

    @property
    def package_dir(self) -> Path:
        return self.folder / "node_modules" / self.package


def product(name: str) -> Product:
    try:
        return PRODUCTS[name]
    except KeyError:
        raise ProductError(f"unknown product {name!r}; known: {', '.join(PRODUCTS)}") from None


def product_version(spec: Spec, name: str, version: str | None = None) -> tuple[str, str]:
    """The npm package of ``name`` and ``version`` (a covered release), or by default the release
    ``spec`` is at: the base for the loaded spec, the claimed one for ``spec.at(...)``."""
    product(name)
    area = spec.areas[name]
    if not area.product or area.version is None:
        raise ProductError(f"spec area {name!r} ships no product version")
    chosen = area.version if version is None else version
    if not area.covers(chosen):
        raise ProductError(f"the spec covers {name} {area.ranges}, not {chosen}")
    return area.product["package"], chosen


def shipped_versions(spec: Spec, name: str) -> tuple[str, ...]:
    """The releases of ``name`` the suite installs and records: the ``recorded`` release of each
    range (spec/<product>.yaml), the base first; not every covered release (that would be 40
    Codex installs for one verdict the ranges already give)."""
    product(name)
    return spec.areas[name].recorded


def locked(spec: Spec, name: str) -> tuple[str, str]:
    """The npm package and base version of ``name``; kept while callers move to
    :func:`product_version` (the version a spec is at) and :func:`shipped_versions`."""
    base = spec.areas[name].base_area or spec.areas[name]
    return product_version(spec, name, base.shipped[0] if base.shipped else None)  # the base range's first release


def cache_root(override: Path | None = None) -> Path:
    """--cache-dir, else $SUBAGENT_CONFORMANCE_PRODUCTS, else <XDG cache>/subagent-conformance/products."""
    if override is not None:
        return override
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "subagent-conformance" / "products"


def install_folder(root: Path, package: str, version: str) -> Path:
    return root / f"{package}@{version}"


def npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise ProductError(
            "npm is not on PATH: the real products are installed from the npm registry; "
            "install Node.js 18 or newer (it brings npm) and try again"
        )
    return npm


def run_command(
    argv: list[str], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a helper command in its own process group; the whole group dies on timeout."""
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ProductError(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # anything the command left behind
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def resolve_version(package: str, version: str) -> str:
    """An exact version as given; a dist-tag (``latest``) resolved with ``npm view``."""
    if EXACT_VERSION.match(version):
        return version
    if not DIST_TAG.match(version):
        raise ProductError(f"{version!r} is neither an exact version (like 0.147.0) nor an npm dist-tag (like latest)")
    done = run_command([npm(), "view", f"{package}@{version}", "version", "--json"], 120)
    if done.returncode != 0:
        raise ProductError(f"`npm view {package}@{version} version` failed:\n{_tail(done.stderr)}")
    try:
        resolved = json.loads(done.stdout)
    except ValueError:
        resolved = None
    if isinstance(resolved, list):
        resolved = resolved[-1] if resolved else None
    if not isinstance(resolved, str) or not EXACT_VERSION.match(resolved):
        raise ProductError(f"npm has no version {package}@{version} (it answered {done.stdout.strip()!r})")
    return resolved


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join("  " + line for line in text.strip().splitlines()[-lines:]) or "  (no output)"


def find_binary(folder: Path, name: str) -> Path:
    """The native binary npm installed for this platform under ``folder``."""
    modules = folder / "node_modules"
    found = sorted(p for pattern in product(name).binary_globs for p in modules.glob(pattern) if p.is_file())
    if not found:
        raise ProductError(
            f"no {name} binary under {modules} (looked for {', '.join(product(name).binary_globs)}): "
            "npm installed no platform package for this machine"
        )
    return found[0]


def _product_version(binary: Path) -> str:
    done = run_command([str(binary), "--version"], 60)
    if done.returncode != 0:
        raise ProductError(f"`{binary} --version` exited with {done.returncode}:\n{_tail(done.stderr)}")
    return done.stdout.strip()


def installed(name: str, package: str, version: str, root: Path | None = None) -> Installed | None:
    """The installed version, or None when it is not (completely) installed."""
    folder = install_folder(cache_root(root), package, version)
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    binary = folder / data["binary"]
    if data.get("package") != package or data.get("version") != version or not binary.is_file():
        return None
    return Installed(name, package, version, folder, binary, str(data["product_version"]))


@contextlib.contextmanager
def _lock(root: Path, package: str, version: str) -> Iterator[None]:
    """One installer per version at a time (xdist workers, parallel CI jobs)."""
    locks = root / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{package.replace('/', '+')}@{version}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install(
    name: str,
    package: str,
    version: str,
    root: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> tuple[Installed, bool]:
    """Install ``package@version`` for product ``name`` unless it is there; (installed, whether npm ran).

    npm installs into a staging folder that is renamed into place only once the binary was
    found and answered ``--version``, so an interrupted install never looks complete.
    """
    product(name)
    if not EXACT_VERSION.match(version):
        raise ProductError(f"install needs an exact version, not {version!r}")
    root = cache_root(root)
    if (done := installed(name, package, version, root)) is not None:
        return done, False
    command = npm()
    root.mkdir(parents=True, exist_ok=True)
    with _lock(root, package, version):
        if (done := installed(name, package, version, root)) is not None:
            return done, False  # another process finished it meanwhile
        folder = install_folder(root, package, version)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
        try:
            log(f"npm install {package}@{version} into {folder}")
            argv = [
                command,
                "install",
                f"{package}@{version}",
                "--prefix",
                str(staging),
                "--no-save",
                "--no-package-lock",
                "--ignore-scripts",  # neither product has an install script; nothing else may run
                # The SDK's peers (the JS SDK, zod, MCP) are needed neither by the CLI nor by query()
                # under Node (sdk.mjs imports only Node's built-ins; conformance/products/sdk_run.py).
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ]
            ran = run_command(argv, NPM_TIMEOUT, cwd=staging)
            if ran.returncode != 0:
                raise ProductError(
                    f"`npm install {package}@{version}` failed (exit {ran.returncode}):\n{_tail(ran.stderr)}"
                )
            manifest = staging / "node_modules" / package / "package.json"
            try:
                got = json.loads(manifest.read_text(encoding="utf-8")).get("version")
            except (OSError, ValueError):
                got = None
            if got != version:
                raise ProductError(f"npm installed {package} {got!r}, not {version} ({manifest})")
            binary = find_binary(staging, name)
            marker = {
                "package": package,
                "version": version,
                "binary": str(binary.relative_to(staging)),
                "product_version": _product_version(binary),
            }
            (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)  # an older, incomplete copy
            staging.rename(folder)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    done = installed(name, package, version, root)
    assert done is not None
    return done, True


# ---- running a product offline


@dataclass(frozen=True)
class OfflineRun:
    """The command, environment and working directory of one offline run."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


MODEL = {"codex": "gpt-fake", "claude-code": "claude-sonnet-4-5"}
API_KEY_VARIABLE = "FAKE_MODEL_API_KEY"


def _codex_config(origin: str) -> str:
    """config.toml of a CODEX_HOME that knows only the fake provider, retries off, no plugin or app
    sync (without those two flags Codex looks up github.com and chatgpt.com) and no shell snapshot
    (it runs the login shell in a session of its own, which the provider's process-group teardown
    cannot reach: under load it outlives dispose())."""
    return "\n".join(
        [
            f'model = "{MODEL["codex"]}"',
            'model_provider = "fake"',
            "",
            "[model_providers.fake]",
            'name = "fake"',
            f'base_url = "{origin}/v1"',
            f'env_key = "{API_KEY_VARIABLE}"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "stream_idle_timeout_ms = 3000",
            "",
            "[features]",
            "plugins = false",
            "apps = false",
            "shell_snapshot = false",
            "",
        ]
    )


def work_dir(folder: Path) -> Path:
    """The working directory of a run whose files live under ``folder``."""
    return folder / "work"


def offline(installed: Installed, origin: str, folder: Path, args: list[str]) -> OfflineRun:
    """Configure one run of ``installed`` against the fake model service at ``origin``, with every
    file it writes under ``folder``: the whole environment is given (nothing inherited but PATH),
    so no proxy, key or home directory of the machine leaks in."""
    home = folder / "home"
    cwd = work_dir(folder)
    for path in (home, cwd):
        path.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    if installed.product == "codex":
        codex_home = folder / "codex-home"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(_codex_config(origin), encoding="utf-8")
        env |= {"CODEX_HOME": str(codex_home), API_KEY_VARIABLE: "fake"}
    else:
        config = folder / "claude-config"
        config.mkdir(exist_ok=True)
        env |= {
            "CLAUDE_CONFIG_DIR": str(config),
            "ANTHROPIC_BASE_URL": origin,
            "ANTHROPIC_API_KEY": "fake",
            "CLAUDE_CODE_MAX_RETRIES": "0",  # ten retries by default: about three minutes against a 500
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        args = ["--model", MODEL["claude-code"], *args]
    return OfflineRun([str(installed.binary), *args], env, cwd)


def describe(installed: Installed) -> dict[str, Any]:
    return {
        "product": installed.product,
        "package": installed.package,
        "version": installed.version,
        "product_version": installed.product_version,
        "binary": str(installed.binary),
    }
