"""The `xum` command group. Subcommands are imported only when they run."""

from __future__ import annotations

import importlib
from typing import Any

import click

from xum.core import startup_gc
from xum.core.version import version_string

# name -> (module:attribute, one-line help). Only commands that work are listed here; the parity
# test reconciles this table with PARITY.md.
COMMANDS: dict[str, tuple[str, str]] = {
    "session": ("xum.cli.sessions:session", "Replay one recorded session (read-only)."),
    "sessions": ("xum.cli.sessions:sessions", "List recorded sessions, newest first."),
    "run": ("xum.cli.run:run", "Run one agent task to completion and exit (scripts and CI)."),
    "doctor": ("xum.cli.doctor:doctor", "Check xum's home, config files, providers and sessions."),
    "trust": ("xum.cli.trust:trust", "Trust a project so its hooks may run (or --revoke)."),
    "server": ("xum.cli.server:server", "Start the HTTP/WebSocket server for the browser UI."),
    "acp": ("xum.cli.acp:acp", "Serve the Agent Client Protocol on stdio for editors (Zed, ...)."),
    "inbox": (
        "xum.cli.inbox:inbox",
        "List and answer what waits for you across a running server's workspaces.",
    ),
    "tui": (
        "xum.cli.tui_command:tui",
        "Open the terminal UI (what `xum` alone does on a terminal).",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        if cmd_name != "run":  # `xum run` releases it itself, nearer its first request
            startup_gc.release()
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _print_version(ctx: click.Context, _param: Any, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_string())
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version and git commit.",
)
def cli() -> None:
    """xum: run many AI coding agents in parallel, each in its own isolated workspace."""
