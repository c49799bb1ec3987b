"""Which release the real-products tier installs and runs (conformance.products.provenance.release_to_run):
under a claim that upgrade-check verified (--product-versions), the claimed release V itself runs,
tested under its covered neighbour N's contract, so that the run, the recordings and ``run.products``
are V's; otherwise the covered release the session's spec stands at."""

from __future__ import annotations

from conformance.products.provenance import release_to_run
from conformance.spec import load_spec
from conformance.spec.releases import Verified

SPEC = load_spec()
PACKAGE = "@anthropic-ai/claude-agent-sdk"


def _verified(version: str, near: str, product: str = "claude-code") -> Verified:
    return Verified(product, version, near, "2026-12-02", True)


def test_a_verified_claim_runs_the_claimed_release_under_its_neighbours_contract() -> None:
    spec = SPEC.at({"claude-code": "0.3.334"})  # the session's spec at N, as plugin.py sets it
    assert release_to_run(spec, "claude-code", [_verified("0.3.335", "0.3.334")]) == (PACKAGE, "0.3.335")


def test_a_covered_claim_runs_itself() -> None:
    spec = SPEC.at({"claude-code": "0.3.333"})
    assert release_to_run(spec, "claude-code", []) == (PACKAGE, "0.3.333")


def test_another_products_or_neighbours_verification_changes_nothing() -> None:
    spec = SPEC.at({"claude-code": "0.3.332", "codex": "0.171.0"})
    others = [_verified("0.172.0", "0.171.0", "codex"), _verified("0.3.335", "0.3.334")]
    assert release_to_run(spec, "claude-code", others) == (PACKAGE, "0.3.332")
    assert release_to_run(spec, "codex", others) == ("@openai/codex", "0.172.0")
