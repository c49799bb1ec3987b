"""One settle_run path claimed alone (ADP-026): for each row of table adapter-protocol.settlements,
a harness that lists only that path, with the bindings it takes but the first, is sent settle_run
inputs of that path and of its claimed bindings only, each of them, and every settle test of another
path or binding reads not-applicable. The claimed embedded-stream takes every path, so only the
`settlements` claim keeps the other paths out. A suite that sends a path it was not told, or drops
the one it was, fails that path's row (issue #28, item 6: each row of the table reached by a test
of ADP-026 in every run; the nested run's tests are vectors and strata)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.spec import load_spec
from conformance.verdict.reach import row_params
from tests.conftest import RunSuite

_SPEC = load_spec()

# The reference, with settle_run logging each input it is sent and the test that sent it.
ADAPTER = """
import json, os
import reference_impl
from reference_impl import bound_diagnostic, fold_output, render_tool_result, select_output

CONFORMANCE = {declaration}


def settle_run(request):
    with open(os.environ["SUBAGENT_SETTLE_LOG"], "a", encoding="utf-8") as log:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split("::", 1)[-1].rsplit(" (", 1)[0]
        log.write(json.dumps([test, request["shape"], request["driver"], request["binding"]]) + "\\n")
    return reference_impl.settle_run(request)
"""


class _Paths:
    """Each selected test's settlement path, as its ``claims("settlements", …)`` marker says."""

    def __init__(self) -> None:
        self.of: dict[str, str] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            for mark in item.iter_markers("claims"):
                if mark.args[0] == "settlements":
                    self.of[item.nodeid.split("::", 1)[-1]] = str(mark.args[1])


@pytest.mark.requirement("ADP-026")
@pytest.mark.parametrize("row", row_params(_SPEC, "adapter-protocol", "settlements"))
def test_a_path_claimed_alone_gets_only_its_own_settle_run_inputs(
    tmp_path: Path, run_suite: RunSuite, row: dict[str, Any]
) -> None:
    path, bindings = str(row["settlement"]), [str(b) for b in row["bindings"][1:]]
    declaration = {"protocol": "1", "bindings": bindings, "providers": {}, "process_drivers": [], "settlements": [path]}
    name = f"settles_{path.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(ADAPTER.format(declaration=repr(declaration)), encoding="utf-8")
    log = tmp_path / "settle.log"
    log.touch()
    paths = _Paths()
    sys.modules.pop(name, None)
    try:
        run = run_suite(
            "--pyargs", "conformance.test_results", "-k", "settle", impl=name, importable=[tmp_path],
            report=True, env={"SUBAGENT_SETTLE_LOG": str(log)}, plugins=[paths],
        )  # fmt: skip
    finally:
        sys.modules.pop(name, None)
    assert run.code == 0, run.tail
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    sent = {(shape, driver, binding) for _, shape, driver, binding in calls}
    assert sent == {(row["shape"], row["driver"], b) for b in bindings}, f"{path}: settle_run was sent {sent}"
    outcomes = {t["nodeid"].split("::", 1)[-1]: (t["outcome"], t.get("message", "")) for t in run.report["tests"]}
    calling = {test for test, *_ in calls}
    # A golden vector's path and binding are its input's: only those of the claimed path and bindings run.
    vectors = {f"test_settle_vector[{v['name']}]": v["input"] for v in _SPEC.table("results", "settle_vectors").rows}
    own = {
        test
        for test, given in vectors.items()
        if (given["shape"], given["driver"]) == (row["shape"], row["driver"]) and given["binding"] in bindings
    }
    assert own and own <= calling and not (set(vectors) - own) & calling, "a vector of another path or binding ran"
    # Every other settle test runs exactly when it is of the claimed path, and then calls settle_run.
    assert set(vectors) | set(paths.of) == set(outcomes) and set(paths.of) - set(vectors), sorted(outcomes)
    for test, (outcome, message) in outcomes.items():
        runs = test in own if test in vectors else paths.of[test] == path
        assert (outcome, test in calling) == (("passed", True) if runs else ("not-applicable", False)), (
            test, outcome, message,
        )  # fmt: skip
        if not runs and paths.of[test] != path and (test not in vectors or vectors[test]["binding"] in bindings):
            assert f"does not claim settlements {paths.of[test]!r}" in message, (test, message)
    # Each other path is kept out by the settlements claim itself, not only by the bindings.
    others = {p for t, p in paths.of.items() if "does not claim settlements" in outcomes[t][1]}
    assert others == {str(r["settlement"]) for r in _SPEC.table("adapter-protocol", "settlements").rows} - {path}
