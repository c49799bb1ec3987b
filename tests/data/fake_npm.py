"""A stand-in for npm in tests/test_products.py: logs its arguments to $FAKE_NPM_LOG; with
$FAKE_NPM_FAIL it fails as a registry 404 does; ``view PKG versions`` prints $FAKE_NPM_VERSIONS
(without it, fails as offline); ``install PKG@VER --prefix DIR`` writes the
package's manifest and a fake native binary (tests/data/fake_product.py) where the real
platform package puts it, and for the Agent SDK an sdk.d.ts excerpt from tests/data/upgrade/
($FAKE_NPM_SAME_AS, "V=N,...": release V ships N's excerpt, as a release that changes no union;
$FAKE_NPM_DTS, "V=PATH,...": release V ships the file PATH); $FAKE_NPM_PRINTS, "V=TEXT,...": what
release V's binary prints for --version (default "fake V")."""

import json
import os
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent
args = sys.argv[1:]
with open(os.environ["FAKE_NPM_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\n")
if os.environ.get("FAKE_NPM_FAIL"):
    sys.stderr.write("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nothing\n")
    sys.exit(1)
if args[0] == "view":  # `view PKG versions --json`: $FAKE_NPM_VERSIONS, else fail as offline
    if "versions" in args and os.environ.get("FAKE_NPM_VERSIONS"):
        print(os.environ["FAKE_NPM_VERSIONS"])
        sys.exit(0)
    sys.stderr.write("npm error code ENOTFOUND\nnpm error network request failed (offline)\n")
    sys.exit(1)
package, _, version = args[1].rpartition("@")
same_as = dict(pair.split("=", 1) for pair in os.environ.get("FAKE_NPM_SAME_AS", "").split(",") if pair)
modules = Path(args[args.index("--prefix") + 1]) / "node_modules"
(modules / package).mkdir(parents=True)
(modules / package / "package.json").write_text(json.dumps({"name": package, "version": version}))
if package == "@openai/codex":
    binary = modules / "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
    schema = str(DATA / "upgrade" / f"codex-{same_as.get(version, version)}")
else:
    binary = modules / "@anthropic-ai/claude-agent-sdk-linux-x64/claude"
    declarations = DATA / "upgrade" / f"claude-agent-sdk-{same_as.get(version, version)}.d.ts"
    files = dict(pair.split("=", 1) for pair in os.environ.get("FAKE_NPM_DTS", "").split(",") if pair)
    declarations = Path(files[version]) if version in files else declarations
    (modules / package / "sdk.d.ts").write_text(declarations.read_text(encoding="utf-8"), encoding="utf-8")
    schema = ""
binary.parent.mkdir(parents=True)
binary.write_text(f"#!{sys.executable}\n" + (DATA / "fake_product.py").read_text(encoding="utf-8"), encoding="utf-8")
binary.chmod(0o755)
prints = dict(pair.split("=", 1) for pair in os.environ.get("FAKE_NPM_PRINTS", "").split(",") if pair)
about = {"version": version, "schema": schema, "prints": prints.get(version, f"fake {version}")}
(binary.parent / "fake_product.json").write_text(json.dumps(about))
