"""The pytest entry point (``pytest11``) of subagent-conformance: dormant until asked.

Installed into a harness author's venv, this module is loaded by every pytest run there, so it
does nothing but declare the suite's options (``--impl`` and the rest, so that they can be
typed) and decide whether the run asked for the suite: an argument reaching its tests (the
``conformance`` package, or this project's own ``tests/`` in a checkout) or one of its options.
Only then is ``conformance.plugin`` imported and registered (and pytest's cache kept out of the
folder the run started from, ``_cache_outside``); otherwise no module of the suite is imported,
and the run's tests, outcomes, header, fixtures, markers, Hypothesis settings and cache are what
they would be without it.

The module is top-level and uniquely named so that a project's own top-level ``conformance``
package cannot hide it: pytest starts, and a run that gives the suite's options but reaches a
``conformance`` package that is not the suite stops with one usage error naming both.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent
SUITE = _HERE / "conformance"  # the suite's package: beside this module, in a wheel and in a checkout

# dest, flags, keyword arguments: the options of the suite (its interface; conformance.plugin reads them).
OPTIONS: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
    ("impl", ("--impl",), {
        "default": "reference_impl", "metavar": "MODULE",
        "help": "the implementation under test: pkg.mod or pkg.mod:attr with a CONFORMANCE declaration, or "
        "exec:COMMAND (default: %(default)s, the bundled reference implementation)",
    }),
    ("exec_timeout", ("--call-timeout", "--exec-timeout"), {
        "type": float, "default": None, "metavar": "SECONDS",
        "help": "how long a pure operation may take before the adapter counts as hung, Python or exec:… "
        "(default: pure_call_timeout of the spec's exec_limits)",
    }),
    ("validate_adapter", ("--validate-adapter",), {
        "action": "store_true", "default": False,
        "help": "with --impl=exec:…, also validate every protocol line in both directions against "
        "exec_request / exec_response of spec/schema/operations.json (operation values are always validated)",
    }),
    ("requirement", ("--requirement",), {
        "action": "append", "default": [], "metavar": "IDS",
        "help": "run only the tests that check these requirement IDs (comma-separated; repeatable)",
    }),
    ("expected_failures", ("--expected-failures",), {
        "default": None, "metavar": "FILE",
        "help": "YAML/JSON list of known failures (requirement or test, reason, link); listed failures are "
        "expected; a listed test that passes, or a listed requirement whose tests ran without a failure showing it, "
        "fails the run; an entry naming nothing of the run is reported unused. A test is MODULE::NAME, MODULE "
        "relative to the installed package (test_selection.py) or to its folder (conformance/test_selection.py) or "
        "as a node id shows it, or NAME alone; NAME with its parameters (test_x[case]) is one case, without them "
        "every case",
    }),
    ("conformance_report", ("--conformance-report",), {
        "default": None, "metavar": "PATH",
        "help": "write a JSON report: every requirement's status and every test's outcome",
    }),
    ("product_versions", ("--product-versions",), {
        "default": None, "metavar": "FILE",
        "help": "releases the spec does not cover yet, verified on release day by `subagent-conformance upgrade-check "
        "--product P --version V --write-versions FILE`: a claim of such a release is tested exactly as the covered "
        "release it is equivalent to",
    }),
    ("real_products", ("--real-products",), {
        "action": "store_true", "default": False,
        "help": "also run the real-products tier: the installed Codex app-server and Claude Code CLI against fake "
        "model services on 127.0.0.1 (install them first: subagent-conformance products install)",
    }),
    ("serial_process_tier", ("--serial-process-tier",), {
        "action": "store_true", "default": False,
        "help": "play each process-tier scenario when its test runs, one after the other, instead of starting "
        "them in the background as the run begins (a failure is always played again alone)",
    }),
    ("conformance_summary", ("--conformance-summary",), {
        "default": None, "metavar": "PATH",
        "help": "write a Markdown summary of the run, fit for a CI step summary",
    }),
    ("docs_url", ("--docs-url",), {
        "default": None, "metavar": "URL",
        "help": "the rendered contract's index (contract.md) that the summary's requirement IDs link to, a URL or "
        "path; each links to <area>.md#<ID> beside it (default: the contract published with this version of the "
        "suite, the Source repository of the package's project URLs at its version tag)",
    }),
]  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("subagent-conformance")
    for dest, flags, kwargs in OPTIONS:
        group.addoption(*flags, dest=dest, **kwargs)


def suite_roots() -> list[Path]:
    """Where the suite's tests live: the package, and in a checkout the project's own tests/."""
    roots = [SUITE]
    if (_HERE / "spec" / "index.yaml").is_file() and (_HERE / "tests" / "conftest.py").is_file():
        roots.append(_HERE / "tests")
    return roots


def _given(config: pytest.Config) -> list[str]:
    """The suite's options this run gives (their first flag), in declaration order."""
    given = []
    for dest, flags, kwargs in OPTIONS:
        if getattr(config.option, dest, kwargs["default"]) != kwargs["default"]:
            given.append(flags[0])
    return given


def _where(arg: str, config: pytest.Config) -> Path | None:
    """The file or folder an argument names, as pytest will resolve it (``--pyargs`` included)."""
    target = arg.split("::", 1)[0]
    if config.option.pyargs and target.replace(".", "").replace("_", "").isalnum():
        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            if spec.submodule_search_locations:
                return Path(next(iter(spec.submodule_search_locations))).resolve()
            if spec.origin:
                return Path(spec.origin).resolve()
    path = Path(config.invocation_params.dir, target)
    return path.resolve() if path.exists() else None


def reaches_suite(config: pytest.Config) -> bool:
    """Whether an argument of the run names the suite's tests, or a folder holding them."""
    roots = suite_roots()
    for arg in config.args:
        path = _where(str(arg), config)
        if path is not None and any(path.is_relative_to(r) or r.is_relative_to(path) for r in roots):
            return True
    return False


def _shadow() -> Path | None:
    """The folder of a ``conformance`` package that is not the suite, if that is what imports."""
    try:
        spec = importlib.util.find_spec("conformance")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    found = Path(locations[0]).resolve() if locations else None
    return found if found is not None and found != SUITE else None


def _portable_args(config: pytest.Config) -> None:
    """A node id as the suite's reports print it (``conformance/test_x.py::name``, relative to the
    folder holding the package, on every machine), given as an argument where no such file is,
    names the installed suite's module: what a run printed pastes back as it is."""
    for i, arg in enumerate(config.args):
        target, sep, rest = str(arg).partition("::")
        portable = target.startswith(f"{SUITE.name}/") and (_HERE / target).is_file()
        if portable and not Path(config.invocation_params.dir, target).exists():
            config.args[i] = f"{_HERE / target}{sep}{rest}"


_PARSER = pytest.StashKey[pytest.Parser]()
_ASKED = pytest.StashKey[bool]()


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> None:
    early_config.stash[_PARSER] = parser  # for _cache_outside, before any ini value is read


def _asked(config: pytest.Config) -> bool:
    """Whether this run asks for the suite (decided once: the paths the suite's node ids name made real)."""
    if _ASKED not in config.stash:
        _portable_args(config)
        config.stash[_ASKED] = reaches_suite(config)
    return config.stash[_ASKED]


def _cache_outside(config: pytest.Config) -> None:
    """pytest's own cache (``--lf``, ``--ff``) under the suite's cache folder, one per rootdir, not
    ``.pytest_cache`` in the folder the run started from: a guest writes nothing there. The default
    of ``cache_dir`` changes, so a ``cache_dir`` of the user's ini file or ``-o cache_dir=`` still
    wins, and a run that does not ask for the suite keeps pytest's.

    No public API sets an ini value, and ``config.inicfg`` is deprecated; re-registering the ini
    key with :meth:`pytest.Parser.addini` (public) before the cache provider reads it
    (its pytest_configure) does. Should pytest refuse the re-registration or read ``cache_dir``
    earlier, the cache lands in the run's folder again and tests/test_guest.py fails: loudly in
    the suite's own tests, never in a user's run."""
    parser = config.stash.get(_PARSER, None)
    if parser is None or not config.pluginmanager.hasplugin("cacheprovider"):
        return  # -p no:cacheprovider: nothing is written anyway
    from conformance.spec.cache import cache_dir  # the suite's own package: _shadow() is None here

    rootdir = hashlib.sha256(str(config.rootpath).encode()).hexdigest()[:16]
    try:
        parser.addini("cache_dir", "Cache directory path", default=str(cache_dir() / "pytest" / rootdir))
    except ValueError:
        return


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Before any plugin is configured: where pytest's cache goes when the suite is asked."""
    if _asked(config) and _shadow() is None:
        _cache_outside(config)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _asked(config):
        given = _given(config)
        if given:
            shadow = _shadow()
            why = (
                f"the package `conformance` this run finds is {shadow}, a project's own, which hides the suite "
                f"(installed at {SUITE}): run the suite from another folder, e.g. "
                "`cd /tmp && python -m pytest --pyargs conformance ...`"
                if shadow is not None
                else "no argument reaches the suite's tests: run `python -m pytest --pyargs conformance ...`"
            )
            raise pytest.UsageError(f"{', '.join(given)} (an option of subagent-conformance) given, but {why}")
        return  # dormant: nothing of the suite is imported
    shadow = _shadow()
    if shadow is not None:
        raise pytest.UsageError(
            f"the package `conformance` this run imports is {shadow}, a project's own, not the suite at {SUITE}: "
            "run the suite from another folder, e.g. `cd /tmp && python -m pytest --pyargs conformance ...`"
        )
    suite = importlib.import_module("conformance.plugin")
    config.pluginmanager.register(suite, "subagent-conformance-suite")  # its pytest_configure runs now
