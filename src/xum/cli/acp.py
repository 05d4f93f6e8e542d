"""`xum acp`: the Agent Client Protocol bridge an editor starts as a subprocess (docs/acp.md).

It speaks ACP (JSON-RPC over stdin and stdout) and runs each session in this process, through
the same assembly as `xum run` and the server. The ACP SDK is imported here, on this command's
path only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import click

from xum.cli.options import runtime_option


@click.command()
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append the bridge's logs to this file instead of stderr (for editors that hide stderr).",
)
@runtime_option(
    "Where new sessions' workspaces run: local (the editor's project directory, with file "
    'and terminal delegation to the editor), worktree, or "ssh <host>".'
)
def acp(log_file: Path | None, runtime: str) -> None:
    """Serve the Agent Client Protocol on stdio, for Zed, Neovim and JetBrains.

    Only protocol messages are written to stdout; logs go to stderr or --log-file.
    """
    from xum.acp.serve import protect_stdout, serve, setup_logging

    try:
        log_fd = setup_logging(str(log_file) if log_file else None)
    except OSError as exc:
        raise click.UsageError(f"--log-file {log_file}: {exc.strerror or exc}") from None
    output = protect_stdout(log_fd)
    from xum.acp.agent import XumAgent

    code = 0
    try:
        asyncio.run(serve(XumAgent(runtime), output))
    except ValueError as exc:
        # connect_read_pipe / connect_write_pipe refuse regular files.
        sys.stderr.write(
            f"error: xum acp talks over pipes (an editor starts it); {exc}\n"
            "  hint: configure your editor to run `xum acp` (docs/acp.md)\n"
        )
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # Sessions are closed and their logs durable; skip the interpreter's teardown (the SDK's
    # and the prewarm threads would only delay the exit the editor waits for).
    os._exit(code)
