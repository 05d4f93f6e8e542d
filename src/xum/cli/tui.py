"""`xum tui` (and `xum` alone on a terminal): the terminal UI.

The one entry to `xum.tui`: Textual and the UI are imported here, on this path only, so `xum run`
and the other commands keep their start-up time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def launch(directory: Path, workspace: str | None = None) -> None:
    """Run the terminal UI in `directory`'s project until the user quits."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.UsageError(
            "the terminal UI needs a terminal (stdin and stdout a TTY); "
            "for scripts and CI use `xum run`"
        )
    from xum.tui.app import XumApp

    XumApp(directory, workspace=workspace).run()


@click.command()
@click.option(
    "--dir",
    "-d",
    "directory",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    help="Project directory (default: the current directory).",
)
@click.option(
    "--workspace",
    "-w",
    default=None,
    help="Open this workspace of the project: its id, its name, or `last` (the newest).",
)
def tui(directory: Path, workspace: str | None) -> None:
    """Open the terminal UI in a project (what `xum` alone does on a terminal).

    The composer starts on a new workspace: type a message and Enter starts work. F1 lists
    every key.
    """
    launch(directory, workspace)
