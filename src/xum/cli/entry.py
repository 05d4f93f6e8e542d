"""Process entry point. `xum --version` answers before click or anything heavy is imported;
`xum` alone on a terminal opens the terminal UI (elsewhere it prints the help)."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from xum.core.version import version_string

        sys.stdout.write(version_string() + "\n")
        return
    from xum.core import startup_gc

    startup_gc.hold()  # every command releases it once loaded (xum.core.startup_gc)
    if not sys.argv[1:] and sys.stdin.isatty() and sys.stdout.isatty():
        from pathlib import Path

        from xum.cli.tui import launch

        startup_gc.release()
        launch(Path("."))
        return
    from xum.cli.app import cli

    cli(prog_name="xum")
