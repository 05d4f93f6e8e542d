"""A tiny program that writes its environment to a file, then (optionally) becomes another
program: put in front of an MCP server, a git hook or a command, it shows what xum passed on."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

# Fake credentials of the kinds xum holds: none may reach a server, a hook or a command.
FAKE_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-test-anthropic-0123456789",
    "OPENAI_API_KEY": "sk-test-openai-0123456789",
    "SOMEVENDOR_API_KEY": "sk-test-vendor-0123456789",
    "XUM_SERVER_AUTH_TOKEN": "xum-test-token-0123456789",
}

_SCRIPT = """\
import json, os, sys
with open(sys.argv[1] + ".part", "w") as out:
    json.dump(dict(os.environ), out)
os.replace(sys.argv[1] + ".part", sys.argv[1])
if len(sys.argv) > 2:
    os.execv(sys.argv[2], sys.argv[2:])
"""


def write_dumper(directory: Path) -> Path:
    """The dumping program, as a Python file in `directory`. Run it as
    `python envdump.py OUT [PROGRAM ARGS...]`."""
    path = directory / "envdump.py"
    path.write_text(_SCRIPT)
    return path


def dump_command(dumper: Path, out: Path, *then: str) -> str:
    """A shell command line that dumps the environment to `out`, then runs `then`."""
    return shlex.join([sys.executable, str(dumper), str(out), *then])


def read_dump(out: Path) -> dict[str, str]:
    data: dict[str, str] = json.loads(out.read_text())
    return data


def leaked(env: dict[str, str]) -> dict[str, str]:
    """The variables of `env` that hold one of the fake secrets, by name or by value."""
    values = set(FAKE_SECRETS.values())
    return {
        k: v
        for k, v in env.items()
        if k in FAKE_SECRETS or v in values or k.endswith(("_API_KEY", "_AUTH_TOKEN"))
    }
