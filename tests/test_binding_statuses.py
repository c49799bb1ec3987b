"""Statuses are honest per binding: the selection tests carry each binding's rules on that
binding's parameter only, so an adapter claiming only ``chunk-events`` reports none of the rules of
``embedded-stream`` or ``text-stream`` as passed (they are not applicable: nothing it claims
reaches them), while the rules of the binding it claims are checked and pass."""

from __future__ import annotations

from pathlib import Path

from conformance.spec import load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

ADAPTER = """
import reference_impl
from reference_impl import bound_diagnostic, fold_output, render_tool_result, select_output, settle_run

CONFORMANCE = {
    **{k: v for k, v in reference_impl.CONFORMANCE.items() if k != "background"},
    "bindings": ["chunk-events"],
    "providers": {},
    "process_drivers": [],
}
"""

# The rules only other bindings have (spec/selection.yaml): SEL-016 the embedded-stream binding's
# reading rule, SEL-018/019 how a data.stream is joined (only embedded-stream rows read data.stream),
# SEL-021 the text-stream binding's rule, SEL-022 text-stream together with an event binding.
OTHER_BINDINGS = {"SEL-016", "SEL-018", "SEL-019", "SEL-021", "SEL-022"}


def test_rules_of_unclaimed_bindings_are_not_passed(run_suite: RunSuite, tmp_path: Path) -> None:
    rows = load_spec().table("selection", "bindings").rows
    own = {rid for r in rows if r["binding"] == "chunk-events" for rid in r["requirement"]}
    others = {rid for r in rows if r["binding"] != "chunk-events" for rid in r["requirement"]}
    assert others <= OTHER_BINDINGS and not own & OTHER_BINDINGS  # the list above still fits the spec
    (tmp_path / "chunk_events_only.py").write_text(ADAPTER, encoding="utf-8")
    run = run_suite(
        "-q", "--pyargs", "conformance.test_selection", impl="chunk_events_only", importable=[tmp_path], report=True
    )
    assert run.code == 0, run.tail
    statuses = {r["id"]: r["status"] for r in run.report["requirements"]}
    assert {rid: statuses[rid] for rid in OTHER_BINDINGS} == dict.fromkeys(OTHER_BINDINGS, "not-applicable")
    assert {rid: statuses[rid] for rid in own} == dict.fromkeys(own, "passed")


def test_stream_rules_never_pass_for_a_port_that_reads_no_stream(run_suite: RunSuite) -> None:
    """A port claiming embedded-stream that never reads data.stream (bad_embedded_reads_chunks) is
    rejected on the binding's reading rule, and the stream readers' SEL-018/SEL-019 do not read
    passed from a property test whose examples never needed a stream: their condition never arose."""
    run = run_suite(
        "--pyargs", "conformance.test_selection", "-k", "embedded", impl="bad_embedded_reads_chunks",
        importable=[fixtures_dir() / "known_bad"], report=True,
    )  # fmt: skip
    assert run.code == 1, run.tail
    statuses = {r["id"]: r for r in run.report["requirements"]}
    assert statuses["SEL-016"]["status"] == "violated"
    for rid in ("SEL-018", "SEL-019"):
        assert statuses[rid]["status"] == "not-testable", statuses[rid]
