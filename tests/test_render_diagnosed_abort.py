"""An aborted result with a diagnostic (a remotely diagnosed abort, the result BGD-003 makes a
failed Job) is inside render_tool_result's domain (RES-029) and reached every run: a foreground
that renders it as a plain abort is blamed on RES-024 alone, by the render vectors (which also
violate RES-027, the vectors' own requirement), by the stratified render test's aborted rows and
by the background's foreground check, while the reference passes them."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.harness.validation import first_problem
from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

_SPEC = load_spec()
_BAD = "bad_res_abort_rendered_plain"
_TIERS = ("conformance.test_results", "conformance.test_background")


def _diagnosed_aborts() -> list[dict[str, Any]]:
    return [
        row
        for row in _SPEC.table("results", "render_vectors").rows
        if row["result"]["stopReason"] == "aborted" and "diagnostic" in row["result"]
    ]


def test_the_render_domain_holds_a_diagnosed_abort_but_no_diagnosed_success() -> None:
    aborted = {"output": [], "stopReason": "aborted", "diagnostic": "ACP permission was denied"}
    assert first_problem(_SPEC.root, "render_tool_result_input", aborted) is None
    completed = {**aborted, "stopReason": "completed"}
    assert first_problem(_SPEC.root, "render_tool_result_input", completed) is not None


def test_a_render_vector_shows_a_diagnosed_abort_with_its_diagnostic_line() -> None:
    """Golden rows exist, and each shows the diagnostic after the aborted headline."""
    rows = _diagnosed_aborts()
    assert rows
    headline = next(r["headline"] for r in _SPEC.table("results", "headlines").rows if r["stop_reason"] == "aborted")
    for row in rows:
        assert row["expected"]["text"].startswith(f"Error: {headline}\nDiagnostic: {row['result']['diagnostic']}")


def _failed(run: Any) -> dict[str, tuple[str, ...]]:
    return {t["nodeid"].split("::")[-1]: tuple(t["blamed"]) for t in run.failed()}


@pytest.mark.parametrize("selection", [[], ["--requirement=RES-024"]], ids=["whole-tiers", "only-RES-024"])
def test_a_plain_abort_rendering_is_blamed_on_res_024(run_suite: RunSuite, selection: list[str]) -> None:
    """Every failure is RES-024's; a failing render vector also violates the requirement its
    table says the vectors hold (RES-027), labelled as that vector."""
    run = run_suite(
        "-q", *selection, "--pyargs", *_TIERS,
        impl=_BAD, importable=[fixtures_dir() / "known_bad"], report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    golden = tuple(_SPEC.table("results", "render_vectors").requirements)
    assert sorted(run.violated()) == sorted({"RES-024", *golden}), run.tail
    failed = _failed(run)
    vectors = {f"test_render_vector[{row['name']}]" for row in _diagnosed_aborts()}
    assert vectors <= set(failed), run.tail
    assert {failed[t] for t in vectors} == {("RES-024", *golden)}
    others = {t: blamed for t, blamed in failed.items() if t not in vectors}
    assert set(others.values()) == {("RES-024",)}, run.tail
    stratified = [t for t in others if t.startswith("test_rendering_follows_the_headline_and_fragment_tables[")]
    assert len(stratified) == 2, run.tail  # the aborted row with a diagnostic, with and without partial text
    assert any(t.startswith("test_job_outcome_of_any_result[") for t in others), run.tail


def test_the_reference_renders_a_diagnosed_abort(run_suite: RunSuite) -> None:
    """The same tests, against the reference: every one of them runs and passes."""
    run = run_suite("-q", "--requirement=RES-024", "--pyargs", *_TIERS, report=True)
    assert run.code == 0, run.tail
    outcomes = run.outcomes()
    vectors = [n for n in outcomes if any(f"test_render_vector[{r['name']}]" in n for r in _diagnosed_aborts())]
    assert vectors and all(outcomes[n][0] == "passed" for n in vectors), run.tail
