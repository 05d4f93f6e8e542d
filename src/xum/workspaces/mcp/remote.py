"""The process that runs a stdio MCP server of an SSH workspace on its host.

The server's stdin and stdout are the MCP stream, so the SSH runtime's usual bootstrap (which
keeps stdin as a lifeline) does not fit. The remote side here is a smaller one: it reads a
payload from stdin up to a NUL byte (bash reads a pipe byte by byte, so nothing after the NUL is
consumed), evaluates it (the environment as `export` lines, `cd` to the workspace, then
`exec bash -c <command>`), and from then on the server owns stdin and stdout.

Secrets never reach a command line: on the remote they arrive on stdin, inside the payload; on
this machine the payload goes from xum to a local `bash` wrapper in an environment variable,
which the wrapper unsets before it starts `ssh`, and writes in front of the MCP stream
(`printf`, then `cat` copies the SDK's writes through). The ssh client gets xum's environment
less its own secrets, like every ssh client xum starts.

When xum closes the connection, the server's stdin ends (the SDK closes it, `cat` exits, ssh
closes the channel); servers written with the SDK exit then. The SDK ends the local process
group (`bash`, `cat`, `ssh`) if they linger.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from xum.runtime.ssh import LOCAL_ONLY_ENV, NON_INTERACTIVE_ENV, client_env, ssh_command

PAYLOAD_ENV = "XUM_MCP_REMOTE_PAYLOAD"

# Runs on the host: read the payload (up to NUL), then run it; the server inherits stdin.
_REMOTE = r"""IFS= read -r -d '' xum_payload || exit 254
eval "$xum_payload"
"""

# Runs here: take the payload out of the environment, then send it ahead of the MCP stream.
_LOCAL = r"""xum_payload=$XUM_MCP_REMOTE_PAYLOAD
unset XUM_MCP_REMOTE_PAYLOAD
{ printf '%s\0' "$xum_payload"; exec cat; } | "$@"
"""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def payload(command: str, env: Mapping[str, str], cwd: str) -> str:
    """The script the host evaluates: exports, `cd`, then the server's command."""
    merged = dict(NON_INTERACTIVE_ENV)
    merged.update({k: v for k, v in env.items() if k not in LOCAL_ONLY_ENV})
    lines = [
        f"export {name}={shlex.quote(value)}"
        for name, value in merged.items()
        if _NAME.fullmatch(name) and "\0" not in value
    ]
    lines.append(f"cd -- {shlex.quote(cwd)} || exit 1")
    lines.append(f"exec bash -c {shlex.quote(command)}")
    return "\n".join(lines) + "\n"


def remote_server_process(
    host: str, command: str, *, env: Mapping[str, str], cwd: str
) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) for the SDK's stdio transport: `command` run on `host` in `cwd`
    with `env` (the workspace's remote environment)."""
    if "\0" in command:
        raise ValueError("the server's command contains a NUL byte")
    argv = ssh_command(host, "exec bash -c " + shlex.quote(_REMOTE))
    local_env = {**client_env(), PAYLOAD_ENV: payload(command, env, cwd)}
    return "bash", ["-c", _LOCAL, "xum-mcp", *argv], local_env
