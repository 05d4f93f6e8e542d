"""Options several commands share, so that each is spelled and checked the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from xum.core.errors import XumError

F = TypeVar("F", bound=Callable[..., Any])


def dir_option(help: str) -> Callable[[F], F]:
    """`--dir`/`-d`: an existing directory, the current one by default."""
    return click.option(
        "--dir",
        "-d",
        "directory",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        default=".",
        help=help,
    )


class RuntimeSpec(click.ParamType[str]):
    """`local`, `worktree`, `ssh <host>`, `docker <image>` or `devcontainer [<config>]` (one
    argument: quote it)."""

    name = "local|worktree|ssh <host>|docker <image>|devcontainer [<config>]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from xum.workspaces.runtime_spec import format_runtime, parse_runtime

        try:
            kind, host = parse_runtime(str(value))
        except XumError as exc:
            self.fail(f"{exc.message} ({exc.hint})" if exc.hint else exc.message, param, ctx)
        return format_runtime(kind, host)


def runtime_option(help: str) -> Callable[[F], F]:
    """`--runtime`/`-r`: where the workspace runs, `local` by default."""
    return click.option(
        "--runtime", "-r", type=RuntimeSpec(), default="local", show_default=True, help=help
    )
