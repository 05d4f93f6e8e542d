"""`xum tui`: the terminal UI, with its flags (`xum` alone on a terminal does the same)."""

from __future__ import annotations

from pathlib import Path

import click

from xum.cli.options import dir_option
from xum.cli.tui import launch


@click.command()
@dir_option("Project directory (default: the current directory).")
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
