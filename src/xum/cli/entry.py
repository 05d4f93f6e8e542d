"""Process entry point. `xum --version` answers before click or anything heavy is imported."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from xum.core.version import version_string

        sys.stdout.write(version_string() + "\n")
        return
    from xum.cli.app import cli

    cli(prog_name="xum")
