"""The wheel's build hook: docs/ as the wheel ships it, with links that work where it is read.

docs/ links into the repository by repository paths, right in a checkout and on GitHub. The
wheel carries it as ``[tool.hatch.build.targets.wheel.hooks.custom] docs`` says, and this hook
stages that copy with every such link rewritten (conformance/spec/published.py): relative inside
the installed tree for a file the wheel ships (the layout read from this target's only-include
and force-include), else to the file in the project's Source repository at the version's tag.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _published(root: Path) -> ModuleType:
    """conformance/spec/published.py by its path: the build has neither the package nor its dependencies."""
    where = root / "conformance" / "spec" / "published.py"
    spec = importlib.util.spec_from_file_location("_subagent_conformance_published", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class ShippedDocsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        published = _published(root)
        target = str(self.config["docs"])
        layout = {
            Path(os.path.relpath(source, root)).as_posix(): dest
            for source, dest in {**self.build_config.only_include, **self.build_config.force_include}.items()
        }
        layout["docs"] = target
        self._staged = Path(tempfile.mkdtemp(prefix="subagent-conformance-docs-"))
        base = published.published_base(self.metadata.core.urls["Source"], self.metadata.version)
        published.ship_docs(root, "docs", self._staged / "docs", layout, base)
        build_data["force_include"][str(self._staged / "docs")] = target

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._staged, ignore_errors=True)
