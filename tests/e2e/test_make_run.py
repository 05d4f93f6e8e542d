"""`make run` hands SERVER_ARGS to `xum server`, and a project named there replaces xum's own
checkout as the one it registers (the README documents `make run SERVER_ARGS="--add-project
<path>"`). Checked with `make -n`, which prints the recipes without running them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")

pytestmark = pytest.mark.skipif(MAKE is None, reason="needs make")


def server_line(*args: str) -> list[str]:
    assert MAKE is not None
    result = subprocess.run(
        [MAKE, "-n", "--no-print-directory", "run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = [ln for ln in result.stdout.splitlines() if "xum server" in ln]
    assert len(lines) == 1, result.stdout
    return lines[0].split("xum server", 1)[1].split()


def test_make_run_adds_this_checkout_by_default() -> None:
    assert server_line() == ["--add-project", "."]


def test_a_project_in_server_args_replaces_the_checkout() -> None:
    args = server_line("SERVER_ARGS=--add-project /src/app --port 3100")
    assert args == ["--add-project", "/src/app", "--port", "3100"]


def test_other_server_args_keep_the_checkout() -> None:
    assert server_line("SERVER_ARGS=--print-auth-token") == [
        "--add-project",
        ".",
        "--print-auth-token",
    ]


def test_the_readme_documents_it() -> None:
    readme = (REPO / "README.md").read_text()
    assert 'make run SERVER_ARGS="--add-project' in readme
