"""The one entry to the terminal UI (`xum tui`, and `xum` alone on a terminal).

Textual and `xum.tui` are imported here, on this path only, so `xum run` and the other commands
keep their start-up time. Nor does `xum` alone import click: `launch` is called straight from
the entry point (the `xum tui` command, with its flags, is `tui_command.py`).

With a server named (`--server-url`, `XUM_SERVER_URL`) or running on this `$XUM_ROOT` (its
`server.lock`), the UI attaches to it, as `xum acp` does: the server runs the sessions.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

NOT_A_TERMINAL = (
    "error: the terminal UI needs a terminal (stdin and stdout a TTY)\n"
    "  hint: for scripts and CI use `xum run`\n"
)


def launch(
    directory: Path,
    workspace: str | None = None,
    server_url: str | None = None,
    auth_token: str | None = None,
) -> None:
    """Run the terminal UI in `directory`'s project until the user quits."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(NOT_A_TERMINAL)
        raise SystemExit(1)
    from xum.core.errors import XumError
    from xum.host.server_target import TOKEN_ENV, attach_target

    try:
        target = attach_target(server_url, auth_token)
    except XumError as exc:
        hint = f"\n  hint: {exc.hint}" if exc.hint else ""
        sys.stderr.write(f"error: {exc.message}{hint}\n")
        raise SystemExit(2) from None
    finally:
        # Read once; nothing this process starts (an `@` path listing, a dialog's git) gets it.
        os.environ.pop(TOKEN_ENV, None)
    from xum.tui.app import XumApp

    if target is None:
        XumApp(directory, workspace=workspace).run()
        return
    from xum.tui.attached_actions import attach_to

    XumApp(directory, workspace=workspace, attach=attach_to(target)).run()
