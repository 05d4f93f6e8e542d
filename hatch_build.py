"""Bake the git commit into built wheels so `xum --version` can report it.

Editable installs skip this: there the version module reads the commit live from the checkout.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _git_short_sha(root: str) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


class BuildInfoHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        sha = _git_short_sha(self.root)
        out_dir = Path(tempfile.mkdtemp(prefix="xum-build-"))
        info = out_dir / "_build_info.py"
        info.write_text(f'GIT_SHA = "{sha}"\n', encoding="utf-8")
        build_data.setdefault("force_include", {})[str(info)] = "xum/_build_info.py"
