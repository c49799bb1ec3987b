"""docs/contract.md is generated from spec/ and must not drift from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.docs import render_contract
from conformance.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent


def test_committed_contract_matches_a_fresh_rendering() -> None:
    committed = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert committed == render_contract(load_spec()), "run `subagent-conformance docs` and commit docs/contract.md"


def test_contract_names_every_requirement_and_seed_statement() -> None:
    spec = load_spec()
    text = render_contract(spec)
    for req in spec.requirements():
        assert f"#### {req.id} — " in text
    for seed in spec.seeds:
        assert f"(`{seed.file}`)" in text


def test_docs_check_fails_on_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "contract.md"
    assert main(["docs", "--output", str(target)]) == 0
    assert main(["docs", "--check", "--output", str(target)]) == 0
    target.write_text(target.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    assert main(["docs", "--check", "--output", str(target)]) == 1
    assert "out of date" in capsys.readouterr().err
