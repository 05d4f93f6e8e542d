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
@click.option(
    "--server-url",
    default=None,
    metavar="URL",
    help="Attach to this running xum server (default: $XUM_SERVER_URL, else the server "
    "running on this XUM_ROOT, else sessions run in this process).",
)
@click.option(
    "--auth-token",
    default=None,
    metavar="TOKEN",
    help="The server's token (default: $XUM_SERVER_AUTH_TOKEN, else the one the server "
    "keeps on this XUM_ROOT).",
)
def tui(
    directory: Path, workspace: str | None, server_url: str | None, auth_token: str | None
) -> None:
    """Open the terminal UI in a project (what `xum` alone does on a terminal).

    The composer starts on a new workspace: type a message and Enter starts work. F1 lists
    every key. With a running xum server (named, or on this XUM_ROOT) the UI attaches to it.
    """
    launch(directory, workspace, server_url, auth_token)
