"""A fake native product binary (written by tests/data/fake_npm.py): ``--version``, and Codex's
``app-server generate-json-schema --out DIR`` copying the schema excerpt of its version."""

import json
import shutil
import sys
from pathlib import Path

about = json.loads((Path(__file__).resolve().parent / "fake_product.json").read_text(encoding="utf-8"))
if sys.argv[1:] == ["--version"]:
    print(about.get("prints", f"fake {about['version']}"))
elif sys.argv[1:3] == ["app-server", "generate-json-schema"] and about["schema"]:
    shutil.copytree(about["schema"], sys.argv[sys.argv.index("--out") + 1], dirs_exist_ok=True)
else:
    sys.exit(f"fake product: unexpected arguments {sys.argv[1:]}")
