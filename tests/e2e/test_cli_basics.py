"""`xum --version`, `xum --help`, and the version baked into a built wheel."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.e2e.cli import run_xum
from xum import __version__
from xum.cli.app import COMMANDS

REPO = Path(__file__).resolve().parents[2]


def git_short_sha() -> str | None:
    if not (REPO / ".git").exists():
        return None
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return out.stdout.strip() or None if out.returncode == 0 else None


def test_version_prints_version_and_commit() -> None:
    result = run_xum("--version")
    assert result.returncode == 0
    match = re.fullmatch(r"v(\S+) \((\w+)\)\n", result.stdout)
    assert match, result.stdout
    assert match.group(1) == __version__
    sha = git_short_sha()
    if sha is not None:
        assert sha.startswith(match.group(2)) or match.group(2).startswith(sha[:7])


def test_help_lists_exactly_the_registered_commands() -> None:
    result = run_xum("--help")
    assert result.returncode == 0
    section = result.stdout.split("Commands:", 1)[1]
    listed = re.findall(r"^  (\S+)", section, flags=re.MULTILINE)
    assert listed == sorted(COMMANDS)


def test_unknown_command_is_a_clear_usage_error() -> None:
    result = run_xum("frobnicate")
    assert result.returncode == 2
    assert "No such command 'frobnicate'" in result.stderr


@pytest.mark.skipif(git_short_sha() is None, reason="needs a git checkout")
def test_built_wheel_bakes_in_the_commit(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    wheel = next(tmp_path.glob("xum-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        info = zf.read("xum/_build_info.py").decode()
        names = set(zf.namelist())
    assert info == f'GIT_SHA = "{git_short_sha()}"\n'
    # Package data the context layer reads at run time: built-in agents and skills.
    assert {
        "xum/context/builtin_index.json",
        "xum/context/builtin_agents/exec.md",
        "xum/context/builtin_agents/plan.md",
        "xum/context/builtin_skills/xum-customize/SKILL.md",
        "xum/context/builtin_skills/xum-customize/references/frontmatter.md",
    } <= names
