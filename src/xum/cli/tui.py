"""The one entry to the terminal UI (`xum tui`, and `xum` alone on a terminal).

Textual and `xum.tui` are imported here, on this path only, so `xum run` and the other commands
keep their start-up time. Nor does `xum` alone import click: `launch` is called straight from
the entry point (the `xum tui` command, with its flags, is `tui_command.py`).
"""

from __future__ import annotations

import sys
from pathlib import Path

NOT_A_TERMINAL = (
    "error: the terminal UI needs a terminal (stdin and stdout a TTY)\n"
    "  hint: for scripts and CI use `xum run`\n"
)


def launch(directory: Path, workspace: str | None = None) -> None:
    """Run the terminal UI in `directory`'s project until the user quits."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(NOT_A_TERMINAL)
        raise SystemExit(1)
    from xum.tui.app import XumApp

    XumApp(directory, workspace=workspace).run()
