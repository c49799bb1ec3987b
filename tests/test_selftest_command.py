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


def test_named_entries_run_alone_under_the_profile_and_each_seed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--adapter M --seeds 1,2` runs M (no reference) under the profile, then under each seed
    with a profile that is not derandomized, and says which run showed what."""
    seen: list[tuple[str, list[str], str | None]] = []
    bad = selftest.known_bad_adapters()[0]

    def fake(impl: str, args: list[str], *, timeout: float | None = 600, profile: str | None = None) -> Verdict:
        seen.append((impl, args, profile))
        return Verdict(impl, 1, bad.caught_by, "")

    monkeypatch.setattr(selftest, "run_suite", fake)
    assert main(["selftest", "--adapter", bad.module, "--profile", "ci", "--seeds", "1,2", "--jobs", "1"]) == 0
    tiers = selftest.tier_modules(bad.tiers)
    assert seen == [
        (bad.module, tiers, "ci"),
        (bad.module, [*tiers, "--hypothesis-seed=1"], selftest.SEEDED_PROFILE),
        (bad.module, [*tiers, "--hypothesis-seed=2"], selftest.SEEDED_PROFILE),
    ]
    assert selftest.SEEDED_PROFILE == "default"  # the one profile that is not derandomized at ci's budget
    out = capsys.readouterr().out
    assert f"{bad.module} (seed 2)" in out and "ACCEPTED" not in out


def test_seeds_without_adapters_or_an_unknown_adapter_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--seeds", "1"]) == 2
    assert "--seeds needs --adapter" in capsys.readouterr().err
    assert main(["selftest", "--adapter", "bad_no_such_thing"]) == 2
    assert "--adapter=bad_no_such_thing: no known-bad or known-good entry" in capsys.readouterr().err
