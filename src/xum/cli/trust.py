"""`xum trust`: allow (or revoke) a project's repo-controlled automation, headlessly."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from xum.cli.options import dir_option
from xum.core.errors import XumError


@click.command()
@dir_option("A directory of the project (default: the current directory).")
@click.option("--revoke", is_flag=True, help="Withdraw trust instead of granting it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def trust(directory: Path, revoke: bool, as_json: bool) -> None:
    """Trust the project so its hooks (.xum/init, .xum/tool_*, .xum/archive, .xum/delete) may run.

    The project is the git repository containing the directory (its main checkout, when run
    from a linked worktree such as a xum workspace), or the directory itself. Review a repository
    before trusting it: trusted projects run repo-controlled code as you.
    """
    from xum.workspaces.safety.trust import set_trusted

    try:
        record, registered = set_trusted(directory, not revoke)
    except XumError as exc:
        if as_json:
            sys.stdout.write(orjson.dumps({"ok": False, **exc.to_dict()}).decode() + "\n")
        else:
            click.echo(f"error: {exc.message}", err=True)
            if exc.hint:
                click.echo(f"  hint: {exc.hint}", err=True)
        sys.exit(1)
    if as_json:
        out = {
            "ok": True,
            "path": record.path,
            "name": record.name,
            "trusted": record.trusted,
            "registered": registered,
        }
        sys.stdout.write(orjson.dumps(out).decode() + "\n")
        return
    if registered:
        click.echo(f"registered project {record.path}")
    if record.trusted:
        click.echo(
            f"trusted {record.path}: its hooks (.xum/init, .xum/tool_pre, .xum/tool_post, "
            ".xum/tool_env, .xum/archive, .xum/delete) will run"
        )
    else:
        click.echo(f"revoked trust for {record.path}: its hooks will not run")
