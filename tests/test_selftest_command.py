"""`subagent-conformance selftest`: its profile, its subset and its per-run limit (the runs
themselves are what tests/test_known_bad.py and tests/test_known_good.py check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.verdict import selftest
from conformance.verdict.selftest import KnownBad, KnownGood, Verdict


def test_a_profile_that_does_not_exist_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--profile", "thorogh"]) == 2
    err = capsys.readouterr().err
    assert "--profile='thorogh' names no profile" in err and "thorough" in err


def test_a_negative_timeout_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--timeout", "-1"]) == 2
    assert "--timeout=-1: seconds, 0 for no limit" in capsys.readouterr().err


def test_only_good_runs_the_reference_over_their_tiers_and_each_good_one_with_the_profile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, list[str], float | None, str | None]] = []

    def fake(impl: str, args: list[str], *, timeout: float | None = 600, profile: str | None = None) -> Verdict:
        seen.append((impl, args, timeout, profile))
        return Verdict(impl, 0, (), "")

    monkeypatch.setattr(selftest, "run_suite", fake)
    assert main(["selftest", "--only", "good", "--profile", "thorough", "--timeout", "0", "--jobs", "1"]) == 0
    good = selftest.known_good_adapters()
    assert [impl for impl, *_ in seen] == ["reference_impl", *(g.module for g in good)]
    tiers = sorted({t for g in good for t in g.tiers})
    assert seen[0][1] == selftest.tier_modules(tuple(tiers))
    assert {(timeout, profile) for *_, timeout, profile in seen} == {(None, "thorough")}
    out = capsys.readouterr().out
    assert out.startswith("profile 'thorough'; each run is killed after no limit")
    assert all(isinstance(s, KnownGood) or s is None for s, _ in selftest.run_all(1, only="good"))
    assert all(not isinstance(s, KnownGood) for s, _ in selftest.run_all(1, only="bad"))
    assert any(isinstance(s, KnownBad) for s, _ in selftest.run_all(1, only="bad"))


def test_a_run_past_its_limit_is_killed_and_fails_saying_so(tmp_path: Path) -> None:
    module = tmp_path / "test_slow.py"
    module.write_text("import time\n\ndef test_sleeps():\n    time.sleep(60)\n", encoding="utf-8")
    # with one of the suite's own modules, or the suite refuses a run that reaches none of its tests
    verdict = selftest.run_suite("reference_impl", [*selftest.tier_modules(("spec",)), str(module)], timeout=3)
    assert verdict.exit_code != 0 and not verdict.rejected
    assert "was still going after 3 s and was killed" in verdict.output
