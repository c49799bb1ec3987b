"""The adapter protocol as the suite keeps it: what the suite passes to an operation (ADP-007,
ADP-011), what an operation that raises or answers an error does to the test (ADP-013), and
that the conformance tests of ADP-014 and DIA-021 reject adapters that break them.

Adapters are small modules written to a scratch folder; the suite runs against them in a
nested in-process session (tests/conftest.py run_suite), as tests/test_known_bad.py does.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.harness.adapter import Adapter
from conformance.spec import SCHEMA_URN, load_spec, schema_validator
from conformance.test_adapter_protocol import VECTOR_CALLS
from tests.conftest import RunSuite

PACKAGE = Path(conformance.__file__).resolve().parent
WriteAdapter = Callable[[str], str]


def tier(name: str) -> str:
    return str(PACKAGE / f"test_{name}.py")


PURE = [row["operation"] for row in load_spec().table("adapter-protocol", "operations").rows if row["tier"] == "pure"]

# Checks that every input is a fresh JSON value as json.loads makes it, then clears it (the
# adapter may keep or change what it is given); otherwise the reference's answer.
STRICT = f"""
import json, math
import reference_impl

CONFORMANCE = dict(reference_impl.CONFORMANCE, process_drivers=[])
_kept = []  # every container received, kept alive so that no id is reused
_ids = set()


def _containers(value, where, found):
    kind = type(value)
    if kind is dict:
        found.append(value)
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"{{where}}: key {{key!r}} is a {{type(key).__name__}}, not a str")
            _containers(item, f"{{where}}[{{key!r}}]", found)
    elif kind is list:
        found.append(value)
        for n, item in enumerate(value):
            _containers(item, f"{{where}}[{{n}}]", found)
    elif kind is float and not math.isfinite(value) or kind not in (str, int, float, bool, type(None)):
        raise TypeError(f"{{where}} is {{value!r}}, which json.loads never gives")
    return found


def _strict(name):
    operation = getattr(reference_impl, name)

    def call(request):
        found = _containers(request, "input", [])
        shared = [c for c in found if id(c) in _ids]
        if shared:
            raise ValueError(f"the input shares {{len(shared)}} object(s) with an earlier call's input")
        _kept.extend(found)
        _ids.update(id(c) for c in found)
        answer = json.loads(json.dumps(operation(request)))
        for container in found:
            container.clear()
        return answer

    return call


for _name in {PURE!r}:
    globals()[_name] = _strict(_name)
"""

RAISES = """
from reference_impl import *
import reference_impl

CONFORMANCE = reference_impl.CONFORMANCE


def bound_diagnostic(request):
    raise ValueError("the bound fell over")
"""

ANSWERS_AN_ERROR = """
import json, sys
import reference_impl

for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "describe":
        answer = {"id": request["id"], "output": reference_impl.CONFORMANCE}
    elif request["op"] == "bound_diagnostic":
        answer = {"id": request["id"], "error": {"message": "the bound fell over"}}
    else:
        answer = {"id": request["id"], "output": getattr(reference_impl, request["op"])(request["input"])}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""

# Plausible bugs, each for the conformance tests of one requirement to catch (and where they are).
BROKEN = {
    "fold_state_kept_across_calls": (
        "ADP-014",
        [tier("adapter_protocol")],
        """
from reference_impl import *
import reference_impl
from reference_impl.selection import AssistantOutputFold, collected_after_each

CONFORMANCE = reference_impl.CONFORMANCE
_folds = {}  # one fold per binding, reused: what an earlier call pushed is still there


def fold_output(request):
    fold = _folds.setdefault(request["binding"], AssistantOutputFold(request["binding"]))
    return collected_after_each(fold, request["steps"])
""",
    ),
    "codex_replies_kept_across_runs": (
        "ADP-014",
        [tier("adapter_protocol")],
        """
from reference_impl import *
import reference_impl

CONFORMANCE = reference_impl.CONFORMANCE
_replies = []  # the provider's reply log lives at module level, not per run


def codex_outcome(request):
    result = reference_impl.codex_outcome(request)
    _replies.extend(result["replies"])
    return dict(result, replies=list(_replies))
""",
    ),
    "returned_diagnostic_unbounded": (
        "DIA-021",
        [tier("diagnostic_bound"), "-k", "settle_run"],
        """
from reference_impl import *
import reference_impl

CONFORMANCE = reference_impl.CONFORMANCE


def settle_run(request):
    # As OLD upstream: only a collected diagnostic is bounded; a returned result passes as is.
    answer = reference_impl.settle_run(request)
    attempt = request.get("attempt", {})
    if attempt.get("outcome") == "returned" and "diagnostic" in answer["result"]:
        answer["result"]["diagnostic"] = attempt["result"]["diagnostic"]
    return answer
""",
    ),
}


@pytest.fixture
def write_adapter(tmp_path: Path) -> WriteAdapter:
    """Write an adapter module under a fresh name beside the nested session and return its name."""

    def write(source: str) -> str:
        name = f"adapter_{uuid.uuid4().hex[:12]}"
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        return name

    return write


@pytest.mark.requirement("ADP-007")
def test_every_call_gets_a_fresh_json_value(write_adapter: WriteAdapter, run_suite: RunSuite) -> None:
    """Every golden-vector test of every pure operation (a selection vector feeds fold_output and
    select_output from the same rows) against an adapter that refuses anything but a fresh JSON
    value, and clears what it was given."""
    impl = write_adapter(STRICT)
    tiers = ["selection", "results", "diagnostic", "claude_code", "codex"]
    run = run_suite("-q", "-k", "vector", *map(tier, tiers), impl=impl, report=True)
    assert run.code == 0, run.tail
    passed = {nodeid.split("::")[-1].split("[")[0] for nodeid, (o, _) in run.outcomes().items() if o == "passed"}
    assert {"test_golden_vector", "test_settle_vector", "test_line_vector", "test_outcome_vector"} <= passed, passed


@pytest.mark.requirement("ADP-007")
def test_the_adapter_gets_its_own_copy() -> None:
    """What the adapter does to its input reaches neither the caller's value nor the next call."""
    received: list[Any] = []

    def bound_diagnostic(request: dict[str, Any]) -> dict[str, Any]:
        received.append(request)
        answer = {"text": request["text"]}
        request["text"] = "changed by the adapter"
        return answer

    target = type("Target", (), {"bound_diagnostic": staticmethod(bound_diagnostic)})
    adapter = Adapter("inline", {}, target, load_spec())
    payload = {"text": "a diagnostic"}
    assert adapter.call("bound_diagnostic", payload) == adapter.call("bound_diagnostic", payload) == payload
    assert payload == {"text": "a diagnostic"} and received[0] is not received[1]


@pytest.mark.requirement("ADP-011")
def test_every_golden_vector_fits_its_operation_schemas() -> None:
    spec = load_spec()
    operations = schema_validator(spec.root, "operations")
    problems = []
    for call in VECTOR_CALLS:
        for row in call.rows(spec):
            for side, value in (("input", call.input(row)), ("output", call.output(row))):
                if value is None:
                    continue
                schema = {"$ref": f"{SCHEMA_URN}operations#/$defs/{call.op}_{side}"}
                for error in operations.evolve(schema=schema).iter_errors(value):
                    problems.append(f"{call.area}.{call.table} {row['name']}: {call.op} {side}: {error.message}")
    assert not problems, "\n".join(problems[:20])
    assert {call.op for call in VECTOR_CALLS} == set(PURE), "every pure operation must have golden vectors"


@pytest.mark.requirement("ADP-011")
def test_an_invalid_input_is_refused_before_the_adapter_sees_it() -> None:
    received: list[Any] = []
    target = type("Target", (), {"bound_diagnostic": staticmethod(received.append)})
    adapter = Adapter("inline", {}, target, load_spec())
    with pytest.raises(AssertionError, match=r"the suite built an invalid bound_diagnostic input: .* at \['text'\]"):
        adapter.call("bound_diagnostic", {"text": 4096})
    assert received == []


@pytest.mark.requirement("ADP-013")
@pytest.mark.parametrize(
    ("form", "says"),
    [("python", "bound_diagnostic raised ValueError: "), ("exec", "bound_diagnostic failed in the adapter: ")],
)
def test_an_operation_that_fails_fails_each_test_naming_it(
    tmp_path: Path, write_adapter: WriteAdapter, run_suite: RunSuite, form: str, says: str
) -> None:
    """The failure names the operation and the error; the tests of other operations still pass."""
    if form == "python":
        impl = write_adapter(RAISES)
    else:
        script = tmp_path / "answers_an_error.py"
        script.write_text(ANSWERS_AN_ERROR, encoding="utf-8")
        impl = f"exec:{sys.executable} {script}"
    run = run_suite(
        "-q", "-k", "bound_vector or render_vector", tier("diagnostic"), tier("results"), impl=impl, report=True
    )
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.tail
    outcomes = run.outcomes()
    bound = {nodeid: outcome for nodeid, outcome in outcomes.items() if "bound_vector" in nodeid}
    assert bound and all(o == "failed" and says in m and "the bound fell over" in m for o, m in bound.values()), bound
    assert {o for nodeid, (o, _) in outcomes.items() if nodeid not in bound} == {"passed"}, outcomes


@pytest.mark.parametrize(("requirement", "where", "source"), BROKEN.values(), ids=list(BROKEN))
def test_a_broken_adapter_is_rejected_by_the_test_of_its_requirement(
    write_adapter: WriteAdapter, run_suite: RunSuite, requirement: str, where: list[str], source: str
) -> None:
    run = run_suite("-q", f"--requirement={requirement}", *where, impl=write_adapter(source), report=True)
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.tail
    assert run.violated() == [requirement], run.tail
