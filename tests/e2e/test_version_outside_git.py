"""`xum --version` from a copy of the package that is neither a git checkout nor a built wheel
(no baked `_build_info.py`): the sha is `unknown`, never an error or a made-up value."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import xum
from xum import __version__

PACKAGE = Path(xum.__file__).resolve().parent


def test_version_outside_a_checkout_says_unknown(tmp_path: Path) -> None:
    site = tmp_path / "site"  # a temp dir: no .git in it or above it
    shutil.copytree(
        PACKAGE,
        site / "xum",
        ignore=shutil.ignore_patterns("static", "__pycache__", "_build_info.py"),
    )
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "xum", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"v{__version__} (unknown)\n"
