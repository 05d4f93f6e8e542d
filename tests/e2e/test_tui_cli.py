"""`xum tui` and `xum` alone, outside a terminal: a clear refusal, and the help as before."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli import run_xum


def test_tui_needs_a_terminal(tmp_path: Path) -> None:
    done = run_xum("tui", cwd=tmp_path, input="")
    assert done.returncode == 1
    assert "needs a terminal" in done.stderr and "xum run" in done.stderr
    assert done.stdout == ""


def test_xum_alone_without_a_terminal_prints_the_help(tmp_path: Path) -> None:
    done = run_xum(cwd=tmp_path, input="")
    assert done.returncode in (0, 2)  # click's group without a command
    said = done.stdout + done.stderr  # click writes a bare group's help to stderr
    assert "tui" in said and "Open the terminal UI" in said


def test_tui_help_lists_its_flags(tmp_path: Path) -> None:
    done = run_xum("tui", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "--dir" in done.stdout and "--workspace" in done.stdout
    assert "--server-url" in done.stdout and "--auth-token" in done.stdout
