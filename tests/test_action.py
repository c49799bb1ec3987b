"""The repository as a GitHub Action (action.yml), run as a runner runs a composite action: its
expressions filled in, each ``run:`` step given to bash in order with the step-summary and output
files, in a fresh workspace outside the checkout. Only ``actions/setup-python`` is skipped: this
interpreter stands in for the one it would set up, as a fresh venv that sees this one's
site-packages as plain path lines (so the action's own install step really installs the suite from
the action's folder, and finds its dependencies already there; pip fetches only the build backend,
as `pip install <checkout>` does). Once with an adapter that conforms (the Node.js example over
exec, on a slice of the suite), once with a known-bad one."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[1]
REPOSITORY, REF = "example-owner/subagent-conformance", "v9.9.9"  # what github.action_repository / _ref would be
_EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")
pytestmark = pytest.mark.timeout(900)


@dataclass(frozen=True)
class Ran:
    code: int  # the exit status of the step that failed, or 0
    log: str
    summary: str  # $GITHUB_STEP_SUMMARY after the run
    outputs: dict[str, str]  # the action's outputs, resolved from its steps'
    workspace: Path
    files: list[str]  # what the workspace held before the run


def _outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT's lines: ``name=value``, or ``name<<DELIMITER`` ... ``DELIMITER``."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            found[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def _fill(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in context, f"action.yml uses ${{{{ {name} }}}}, which the test does not provide"
        return context[name]

    return _EXPRESSION.sub(value, text)


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv's bin/ folder standing in for setup-python's: no suite installed, this
    interpreter's packages (pip, pytest, ...) visible after its own site-packages."""
    venv = tmp_path_factory.mktemp("runner-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    purelib = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip())  # fmt: skip
    (purelib / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return venv / "bin"


def run_action(
    bin_dir: Path, root: Path, inputs: dict[str, str], env: dict[str, str] | None = None, files: tuple[Path, ...] = ()
) -> Ran:
    """Run action.yml's steps as a runner would, in a fresh workspace holding ``files`` (the caller's
    repository: its adapter, say)."""
    action = yaml.safe_load((PROJECT / "action.yml").read_text(encoding="utf-8"))
    workspace, temp = root / "workspace", root / "runner-temp"
    workspace.mkdir()
    temp.mkdir()
    for file in files:
        shutil.copy(file, workspace / file.name)
    declared: dict[str, Any] = action["inputs"]
    assert set(inputs) <= set(declared), f"inputs the action does not declare: {set(inputs) - set(declared)}"
    assert all(name in inputs for name, spec in declared.items() if spec.get("required")), "a required input is missing"
    context = {f"inputs.{name}": inputs.get(name, str(spec.get("default", ""))) for name, spec in declared.items()}
    context |= {
        "github.action_path": str(PROJECT),
        "github.action_repository": REPOSITORY,
        "github.action_ref": REF,
        "github.workspace": str(workspace),
    }
    summary, log = temp / "step-summary.md", []
    summary.touch()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SUBAGENT_CONFORMANCE_", "PYTHON"))}
    base |= {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(temp),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "SUBAGENT_CONFORMANCE_PROFILE": "selftest",
        **(env or {}),
    }
    steps: dict[str, dict[str, str]] = {}
    code = 0
    for number, step in enumerate(action["runs"]["steps"]):
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), f"a step the test cannot stand in for: {step}"
            continue
        assert step.get("shell") == "bash", f"step {number} runs in {step.get('shell')}: the test runs bash"
        output = temp / f"output-{number}"
        output.touch()
        script = temp / f"step-{number}.sh"
        script.write_text(_fill(step["run"], context), encoding="utf-8")
        step_env = {**base, **{k: _fill(str(v), context) for k, v in (step.get("env") or {}).items()}}
        step_env["GITHUB_OUTPUT"] = str(output)
        with subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],  # how a runner runs shell: bash
            cwd=workspace, env=step_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        ) as done:  # fmt: skip
            try:
                out, _ = done.communicate(timeout=600)
            finally:  # the step's process group is reaped, whatever it left
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(done.pid, signal.SIGKILL)
        log.append(out)
        steps[step.get("id", f"step-{number}")] = _outputs(output.read_text(encoding="utf-8"))
        if done.returncode != 0:
            code = done.returncode
            break
    context |= {f"steps.{sid}.outputs.{k}": v for sid, values in steps.items() for k, v in values.items()}
    outputs = {
        name: _EXPRESSION.sub(lambda m: context.get(m.group(1), ""), str(spec["value"]))
        for name, spec in action["outputs"].items()
    }
    return Ran(code, "\n".join(log), summary.read_text(encoding="utf-8"), outputs, workspace, [f.name for f in files])


def _machine_paths(ran: Ran, bin_dir: Path) -> list[str]:
    places = {str(PROJECT), str(ran.workspace.parent), str(bin_dir.parent), sys.prefix, str(Path.home())}
    return sorted(place for place in places if place in ran.summary)


def _check_common(ran: Ran, bin_dir: Path) -> None:
    """What every run of the action gives: its outputs outside the workspace, nothing written into the
    workspace, a summary in the step summary naming nothing of the machine, and the suite run from
    the venv the action installed it into (not the checkout)."""
    assert Path(ran.outputs["report"]).is_file() and Path(ran.outputs["junit"]).is_file(), ran.outputs
    assert not Path(ran.outputs["report"]).is_relative_to(ran.workspace), "the outputs are outside the workspace"
    assert sorted(p.name for p in ran.workspace.iterdir()) == sorted(ran.files), "the run wrote into the workspace"
    assert ran.summary.startswith("## Subagent result contract:"), ran.summary[:500]
    assert not _machine_paths(ran, bin_dir), f"the summary names the machine: {_machine_paths(ran, bin_dir)}"
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import conformance; print(conformance.__file__)"],
        cwd=ran.workspace, capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]},
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(bin_dir.parent), f"the suite ran from {where}, not the action's install"


def test_the_action_passes_a_conforming_adapter(python: Path, tmp_path: Path) -> None:
    node = PROJECT / "fixtures" / "adapters" / "node" / "adapter.mjs"  # the harness's adapter, in its repository
    inputs = {"impl": "exec:node adapter.mjs", "args": "--requirement=SEL-008 -p no:xdist"}
    ran = run_action(python, tmp_path, inputs, files=(node,))
    assert ran.code == 0, ran.log[-6000:]
    assert ran.outputs["verdict"] == "conforms", ran.outputs
    assert "conforms" in ran.summary.splitlines()[0], ran.summary[:500]
    _check_common(ran, python)


def test_the_action_fails_a_known_bad_adapter_and_says_why(python: Path, tmp_path: Path) -> None:
    known_bad = PROJECT / "fixtures" / "known_bad"
    ran = run_action(
        python, tmp_path, {"impl": "bad_no_text_fallback", "args": "--requirement=SEL-008 -p no:xdist"},
        env={"PYTHONPATH": str(known_bad)},  # the caller's adapter, importable as a harness's package would be
    )  # fmt: skip
    assert ran.code == 1, ran.log[-6000:]
    assert ran.outputs["verdict"] == "violated", ran.outputs
    _check_common(ran, python)
    assert f"[SEL-008](https://github.com/{REPOSITORY}/blob/{REF}/docs/contract/selection.md#SEL-008)" in ran.summary
    links = re.findall(r"\]\(([^)\s]+)\)", ran.summary)
    published = f"https://github.com/{REPOSITORY}/blob/{REF}/docs/contract/"
    assert links and all(link.startswith(published) for link in links), links
    assert "--requirement=SEL-008" in ran.summary, "the rerun line"
