"""Recordings per product range (issues #24, #31): every case of fixtures/recordings/cases.yaml
has a transcript at the recorded release of every range that keeps one, each recording belongs to
a case and a recorded release, a case's expectation follows its product's version as data (``versions``), and
the default tier replays the recordings of the version an adapter claims: the reference at the
base versions, and a module re-exporting the reference with only its claimed versions changed at
the newer ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.products.packages import product_version, shipped_versions
from conformance.products.recordings import (
    cases_file,
    expected_results,
    load_cases,
    load_recording,
    missing_recordings,
    recording_file,
    recordings_dir,
)
from conformance.spec import SpecError, load_spec
from conformance.spec.resources import fixtures_dir
from tests.conftest import RunSuite

SPEC = load_spec()
PRODUCTS = ("codex", "claude-code")
UPGRADED = "good_reference_at_newest_versions"  # fixtures/known_good: the reference at the newer versions


def test_every_shipped_version_has_a_recording_of_every_case() -> None:
    """A missing transcript (a new case, a new shipped version) fails here, naming the command
    that records it; each one found is of the package and version its folder says."""
    assert all(len(shipped_versions(SPEC, p)) >= 2 for p in PRODUCTS)
    assert missing_recordings(SPEC) == []
    for case in load_cases(SPEC):
        for version in shipped_versions(SPEC, case.product):
            recording = load_recording(SPEC, recording_file(case.product, version, case.name))
            assert (recording["package"], recording["version"]) == product_version(SPEC, case.product, version)
            assert recording["product"] == case.product and recording["case"] == case.name


def test_a_missing_recording_is_named_with_its_record_command(tmp_path: Path) -> None:
    root = tmp_path / "recordings"
    shutil.copytree(recordings_dir(), root)
    newest = shipped_versions(SPEC, "codex")[-1]
    before = set(missing_recordings(SPEC, root))  # completeness is the test above's; this one is about naming
    recording_file("codex", newest, "http-500", root).unlink()
    [missing] = [m for m in missing_recordings(SPEC, root) if m not in before]
    assert str(recording_file("codex", newest, "http-500", root)) in missing
    assert f"products record --product codex --version {newest} --case http-500" in missing


def test_every_recording_is_of_a_case_and_a_shipped_version() -> None:
    """A renamed or removed case, or a version no longer shipped, would leave a recording nobody replays."""
    known = {(c.product, version, c.name) for c in load_cases(SPEC) for version in shipped_versions(SPEC, c.product)}
    found = sorted(recordings_dir().glob("*/*/*.json"))
    strays = [str(p) for p in found if (p.parent.parent.name, p.parent.name, p.stem) not in known]
    assert found and strays == [], f"recordings of no case or of no shipped version: {strays}"
    assert not list(recordings_dir().glob("*/*.json")), "a recording outside a version folder"


def test_a_case_expects_per_version_as_its_data_says() -> None:
    """The Codex 401 is 'other' through 0.157.1 and httpConnectionFailed with its status from 0.158.0
    (recorded at both: docs/measurements/2026-12-02/wire.md); the root bypass with startup-failure
    results is a process exit through SDK 0.3.273 and an error_during_execution result from 0.3.274
    (recorded at 2.1.332, placed by sdk.d.ts): the expectation of the range the spec stands at."""
    cases = {c.id: c for c in load_cases(SPEC)}
    base, newer = (SPEC.at({"codex": v}) for v in ("0.157.1", "0.158.0"))
    assert cases["codex-http-401"].at(SPEC.at({"codex": "0.160.0"})).expect == cases["codex-http-401"].at(newer).expect
    assert cases["codex-http-401"].at(SPEC.at({"codex": "0.160.0"})).recorded == "0.160.0"
    http_401 = cases["codex-http-401"]
    assert http_401.at(base).expect["failure"]["category"] == "other"
    assert http_401.at(newer).expect["failure"] == {
        "stage": "turn",
        "category": "httpConnectionFailed",
        "httpStatus": 401,
    }
    assert "HTTP status: 401" in expected_results(newer, http_401.at(newer))[0]["diagnostic"]
    assert "HTTP status" not in expected_results(base, http_401.at(base))[0]["diagnostic"]
    bypass = cases["claude-code-bypass-as-root-startup-results"]
    old, new = (SPEC.at({"claude-code": v}) for v in ("0.3.273", "0.3.274"))
    assert bypass.at(old).expect["failure"]["category"] == "process-exit"
    assert bypass.at(new).expect["failure"]["category"] == "error_during_execution"
    assert cases["codex-http-500"].at(newer).expect == cases["codex-http-500"].at(base).expect  # unchanged: inherited


def test_a_versions_entry_of_an_unshipped_version_or_an_impossible_expectation_is_an_error(tmp_path: Path) -> None:
    text = cases_file().read_text(encoding="utf-8")
    first = "0.158.0"  # the range the 401 changes at, by its first release
    entry = "{expect: {stopReason: error, failure: {stage: turn, category: httpConnectionFailed"
    broken = text.replace(f'"{first}": {entry}', f'"9.9.9": {entry}')
    assert broken != text
    file = tmp_path / "cases.yaml"
    file.write_text(broken, encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_cases(SPEC, file)
    [unshipped] = [p for p in raised.value.problems if "is not covered" in p.message]
    assert "codex 9.9.9" in unshipped.message and "9.9.9" in broken.splitlines()[unshipped.line - 1]
    # without its entry, the later ranges inherit the base's 'other', which their wire facts contradict
    inherited = [p for p in raised.value.problems if p is not unshipped]
    assert inherited and f"at codex {first} the spec's wire facts give http-401" in inherited[0].message
    # a release inside a range does not name it: the range is named by its first release
    file.write_text(text.replace(f'"{first}": {entry}', f'"0.160.0": {entry}'), encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_cases(SPEC, file)
    assert any("inside the range 0.159.0–0.160.1" in p.message for p in raised.value.problems)
    # the wire facts of the newer version disagree with an expectation that kept the base's 'other'
    file.write_text(
        text.replace("category: httpConnectionFailed, httpStatus: 401", "category: other"), encoding="utf-8"
    )
    with pytest.raises(SpecError) as raised:
        load_cases(SPEC, file)
    assert any("the spec's wire facts give http-401" in p.message for p in raised.value.problems)


@pytest.mark.parametrize("impl", [None, UPGRADED], ids=["reference-at-base", "reference-re-exported-at-newer"])
def test_the_reference_replays_the_recordings_of_each_shipped_version(impl: str | None, run_suite: RunSuite) -> None:
    """Every recording replay passes for the reference's operations at every shipped version: the
    claimed version reaches them through the suite (the replayed recording and the case's
    expectation at that version), not through the reference's own declaration."""
    run = run_suite(
        "-q",
        "--pyargs",
        "conformance.test_recordings",
        impl=impl,
        importable=[fixtures_dir() / "known_good"],
        report=True,
    )
    assert run.code == 0 and not run.violated(), run.tail
    replays = {n: o for n, o in run.outcomes().items() if "test_recording_replays[" in n}
    assert len(replays) == len(load_cases(SPEC)) and {o for o, _ in replays.values()} == {"passed"}, replays


def test_the_claimed_version_decides_which_recording_is_replayed(tmp_path: Path, run_suite: RunSuite) -> None:
    """An adapter that reports the 401 as 'other' passes the 0.147.0 replay (that is what 0.147.0
    sends) and fails the 0.171.0 one, blamed on the rules its two differences show: the object
    variant's category (CDX-003) and its HTTP status (CDX-004)."""
    newest = shipped_versions(SPEC, "codex")[-1]
    bug = (
        "import copy\n"
        "import reference_impl\n"
        "globals().update({n: getattr(reference_impl, n) for n in reference_impl.__all__})\n"
        "CLAIMS = reference_impl.CONFORMANCE\n"
        "CONFORMANCE = {**CLAIMS, 'providers': {**CLAIMS['providers'], 'codex': VERSION}}\n"
        "def codex_outcome(request):  # the bug: the 401 read as 0.147.0 sent it\n"
        "    request = copy.deepcopy(request)\n"
        "    for event in request['events']:\n"
        "        error = (((event.get('frame') or {}).get('params') or {}).get('turn') or {}).get('error')\n"
        "        if isinstance(error, dict) and 'httpConnectionFailed' in (error.get('codexErrorInfo') or {}):\n"
        "            error['codexErrorInfo'] = 'other'\n"
        "    return reference_impl.codex_outcome(request)\n"
    )
    outcomes = {}
    for version in shipped_versions(SPEC, "codex"):
        module = tmp_path / f"other_401_{version.replace('.', '_')}.py"
        module.write_text(f"VERSION = {version!r}\n{bug}", encoding="utf-8")
        run = run_suite(
            "-q", "--pyargs", "conformance.test_recordings", "-k", "codex-http-401",
            impl=module.stem, importable=[tmp_path], report=True,
        )  # fmt: skip
        outcomes[version] = run
    base = shipped_versions(SPEC, "codex")[0]
    assert outcomes[base].code == 0, outcomes[base].tail
    assert outcomes["0.151.0"].code == 0 and outcomes["0.158.0"].code == 1  # the range the wire changes at
    assert outcomes[newest].code == 1 and sorted(outcomes[newest].violated()) == ["CDX-003", "CDX-004"], outcomes[
        newest
    ].tail
