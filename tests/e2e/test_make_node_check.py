"""The Makefile's Node.js check: without a new enough Node and npm, the web UI recipes stop with
one line naming the version needed and how to get it, instead of an obscure npm or Vite error."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")

pytestmark = pytest.mark.skipif(
    MAKE is None or shutil.which("node") is None, reason="needs make and node"
)


def check_node(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path if path is not None else os.environ["PATH"]}
    assert MAKE is not None
    return subprocess.run(
        [MAKE, "-s", "--no-print-directory", "check-node", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_clear_refusal(result: subprocess.CompletedProcess[str], needed: str) -> None:
    assert result.returncode != 0
    line = next(ln for ln in result.stderr.splitlines() if ln.startswith("error:"))
    assert f"Node.js >= {needed} and npm" in line
    assert "apt-get install nodejs npm" in line and "NodeSource" in line


def test_the_installed_node_passes() -> None:
    result = check_node()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""


def test_a_node_older_than_needed_is_named() -> None:
    result = check_node("NODE_MIN=999.0")
    assert_clear_refusal(result, "999.0")
    assert "found: node v" in result.stderr  # says what it found


def test_missing_node_and_npm_are_named(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    result = check_node(path=str(empty))  # recipes run in /bin/bash, found without PATH
    assert_clear_refusal(result, "20.19")
    assert "found: node missing, npm missing" in result.stderr
