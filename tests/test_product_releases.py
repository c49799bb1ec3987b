"""Any released product version, not only the shipped ones: ``products install|record --version``
check the version against npm's published list (a stubbed list here, through a fake npm) and
refuse an unpublished one naming the nearest releases; and the real tier's provenance (what ran,
down to the binary's sha256) as the JSON report and the summary carry it. No network."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.products.packages import Installed, ProductError, install, locked
from conformance.products.provenance import gathered, provenance
from conformance.products.releases import check_published
from conformance.spec import load_spec, schema_validator
from conformance.verdict.report import STATUSES
from conformance.verdict.summary import markdown_summary

DATA = Path(__file__).parent / "data"
SPEC = load_spec()
# An excerpt of `npm view @openai/codex versions --json` (2026-12-02): platform builds are
# versions of the same package; 0.170.x was never published.
PUBLISHED = ["0.147.0-linux-x64", "0.147.0", "0.148.0-alpha.8", "0.148.0", "0.160.0-linux-x64", "0.160.0"]
PUBLISHED += ["0.169.1-linux-x64", "0.169.1", "0.171.0-linux-x64", "0.171.0", "0.172.0-linux-x64", "0.172.0"]


@pytest.fixture
def fake_npm(fake_npm: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared fake npm, whose `view … versions` answers PUBLISHED; returns its call log."""
    monkeypatch.setenv("FAKE_NPM_VERSIONS", json.dumps(PUBLISHED))
    return fake_npm


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize(
    ("version", "nearest"),
    [
        ("0.170.0", "0.169.1 and 0.171.0"),  # between releases: both sides
        ("0.140.0", "0.147.0"),  # older than every release
        ("0.999.0", "0.172.0"),  # newer than every release
        ("0.148.0-alpha.9", "0.147.0 and 0.148.0"),  # platform builds and pre-releases are never suggested
    ],
)
def test_an_unpublished_version_names_the_nearest_releases(version: str, nearest: str) -> None:
    with pytest.raises(ProductError, match=f"no @openai/codex@{version}; the nearest published releases: {nearest}$"):
        check_published("@openai/codex", version, PUBLISHED)


@pytest.mark.parametrize("version", ["0.160.0", "0.148.0-alpha.8", "0.147.0"])
def test_a_published_version_passes_and_an_unknown_list_checks_nothing(version: str) -> None:
    check_published("@openai/codex", version, PUBLISHED)  # published: in the list, shipped or not
    check_published("@openai/codex", "0.170.0", None)  # npm could not be asked: the install says why


@pytest.mark.parametrize("action", ["install", "record"])
def test_products_refuse_an_unpublished_version_before_installing(
    action: str, fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["products", action, "--product", "codex", "--version", "0.170.0", "--cache-dir", str(tmp_path / "c")]
    argv += ["--output", str(tmp_path / "out")] if action == "record" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "npm has published no @openai/codex@0.170.0; the nearest published releases: 0.169.1 and 0.171.0" in err
    assert [c[0] for c in _calls(fake_npm)] == ["view"]  # nothing was installed
    assert not (tmp_path / "out").exists()


def test_products_record_takes_a_published_version_the_spec_does_not_ship(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.172.0 is published (in this fake npm's list) and no range covers it: it is installed and
    recorded under the contract of the nearest covered release not newer (the fake binary then
    fails the session: no app-server)."""
    assert not SPEC.areas["codex"].covers("0.172.0")
    argv = ["products", "record", "--product", "codex", "--version", "0.172.0", "--case", "http-500"]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache"), "--output", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert "codex 0.172.0 is not covered by the spec: recording under the contract of 0.171.0" in captured.out
    assert "is not shipped (shipped:" not in captured.err
    assert "closed stdout before answering initialize" in captured.err
    assert [c[:2] for c in _calls(fake_npm)] == [["view", "@openai/codex"], ["install", "@openai/codex@0.172.0"]]


# ---- provenance


def _installed(fake_npm: Path, tmp_path: Path, name: str) -> Installed:
    done, _ = install(name, *locked(SPEC, name), tmp_path / "cache")
    return done


@pytest.mark.parametrize("name", ["codex", "claude-code"])
def test_provenance_names_the_package_the_binary_and_its_hash(name: str, fake_npm: Path, tmp_path: Path) -> None:
    done = _installed(fake_npm, tmp_path, name)
    entry = provenance(done, tmp_path / "cache")
    assert entry["package"] == f"{done.package}@{done.version}" and entry["product_version"] == done.product_version
    assert (tmp_path / "cache" / entry["binary"]).resolve() == done.binary.resolve()
    assert not Path(entry["binary"]).is_absolute() and entry["binary"].startswith(f"{done.package}@{done.version}/")
    assert entry["sha256"] == hashlib.sha256(done.binary.read_bytes()).hexdigest()
    assert ("sdk" in entry) is (name == "claude-code")
    validator = schema_validator(SPEC.root, "report").evolve(
        schema={"$ref": "urn:subagent-conformance:spec:report#/$defs/real_product"}
    )
    validator.validate(entry)
    done.binary.write_bytes(done.binary.read_bytes() + b"\n# changed\n")  # other bytes: another hash
    assert provenance(done, tmp_path / "cache")["sha256"] != entry["sha256"]


def test_the_report_and_summary_name_what_ran(fake_npm: Path, tmp_path: Path) -> None:
    """The tests' properties, one per test and repeated across tests, become one entry per product
    in run.products (a valid report), and the summary's line names each package, version and hash."""
    ran = [_installed(fake_npm, tmp_path, name) for name in ("codex", "claude-code")]
    entries = [json.dumps(provenance(done, tmp_path / "cache")) for done in ran]
    products = gathered([entries[1], entries[0], entries[1]])
    assert [p["product"] for p in products] == ["claude-code", "codex"]
    report = {
        "suite": {"name": "subagent-conformance", "version": "0.0.0"},
        "spec_version": SPEC.version,
        "adapter": {"impl": "reference_impl", "declaration": None},
        "run": {"date": "2026-12-02T00:00:00+00:00", "exit_status": 0, "verdict": "conforms", "products": products},
        "summary": dict.fromkeys(STATUSES, 0),
        "requirements": [],
        "tests": [],
    }
    schema_validator(SPEC.root, "report").validate(report)
    text = markdown_summary(report)
    [line] = [line for line in text.splitlines() if line.startswith("Real products that ran:")]
    for p in products:
        assert p["package"] in line and p["product_version"] in line and p["sha256"][:12] in line
