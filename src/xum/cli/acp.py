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
from typing import TYPE_CHECKING

import click

from xum.cli.options import runtime_option

if TYPE_CHECKING:
    from xum.acp.agent import XumAgent
    from xum.acp.remote_agent import RemoteXumAgent
    from xum.host.server_target import ServerTarget


@click.command()
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append the bridge's logs to this file instead of stderr (for editors that hide stderr).",
)
@runtime_option(
    "Where new sessions' workspaces run: local (the editor's project directory, with file "
    'and terminal delegation to the editor), worktree, "ssh <host>", "docker <image>" or '
    '"devcontainer [<config>]".'
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
def acp(
    log_file: Path | None, runtime: str, server_url: str | None, auth_token: str | None
) -> None:
    """Serve the Agent Client Protocol on stdio, for Zed, Neovim and JetBrains.

    Only protocol messages are written to stdout; logs go to stderr or --log-file.
    """
    target = _server_target(server_url, auth_token)
    from xum.acp.serve import protect_stdout, serve, setup_logging

    try:
        log_fd = setup_logging(str(log_file) if log_file else None)
    except OSError as exc:
        raise click.UsageError(f"--log-file {log_file}: {exc.strerror or exc}") from None
    output = protect_stdout(log_fd)
    agent: XumAgent | RemoteXumAgent
    if target is None:
        from xum.acp.agent import XumAgent

        agent = XumAgent(runtime)
    else:
        from xum.acp.remote_agent import RemoteXumAgent

        agent = RemoteXumAgent(target, runtime)
    code = 0
    try:
        asyncio.run(serve(agent, output))
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


def _server_target(url: str | None, token: str | None) -> ServerTarget | None:
    """The server to attach to: the flag, `XUM_SERVER_URL`, or the server running on this
    root (its `server.lock`); None to run sessions in this process. The token is taken out of
    this process's environment so that nothing it starts inherits it."""
    from xum.core.errors import XumError
    from xum.host.server_target import TOKEN_ENV, attach_target

    try:
        return attach_target(url, token)
    except XumError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        os.environ.pop(TOKEN_ENV, None)
