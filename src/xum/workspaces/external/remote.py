"""An external agent on an SSH workspace's host (or in a Docker or Dev Container workspace's
container): started there, its stdio carried by ssh (or the container CLI's `exec -i`).

The local process is the client of the workspace's runtime (ssh with its options and its
multiplexed connection; for a container, `<cli> exec -i [--user <remoteUser>] <container>`),
running a small bash launcher (`LAUNCHER`) on the host, in the workspace's folder there. As
with the runtime's own commands, what the agent is started with (its environment, which may
hold its API key, its directory, the sandbox) travels on stdin, ended by a NUL byte, so it
never appears in an argv or a `ps` there. The launcher then:

* starts the agent as a job in its own process group, its stdout and stderr the channel's own;
* relays the rest of its stdin (the ACP messages) to the agent through a pipe. That relay is
  the lifeline: when xum closes the channel (the workspace closes, a cancel the agent ignores,
  xum dies), the relay ends and the agent's group gets SIGTERM, then SIGKILL a second later.
  Several agents do not exit when their input ends: the agent's own stdin cannot be the
  lifeline;
* when the agent ends first, stops the relay and exits with the agent's status.

Before that, the definition's `command` is looked up on the host (`command -v`, with the
definition's `env` over the host's login environment): a missing one is an error naming the
host. In a container no bubblewrap applies (the container is the boundary, as for its
commands); in a Dev Container the agent gets what the container's commands get under its own
`env` (the probed shell environment, `remoteEnv`: `_launch_env`). The host's bubblewrap, when
the workspace's sandbox applies, is the one SSH commands use (probed once per session); its
layout is decided on the host (`shell_for`), and the agent's state directories are made there
first.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING

from xum.workspaces.external.connection import ExternalAgentError, Launch
from xum.workspaces.external.definitions import DOCS, ExternalAgentDefinition
from xum.workspaces.external.sandboxed import StateKind, agent_layout, state_paths

if TYPE_CHECKING:
    from xum.runtime.ssh import SshRuntime
    from xum.workspaces.external.client import XumClient

# Its own stderr goes to /dev/null (job control's notes would reach the agent's stderr tail);
# the agent's goes to the channel. The coprocess's pipe ends are copied to plain descriptors,
# which bash does not close in the relay it starts next.
LAUNCHER = r"""
IFS= read -r -d '' xum_payload || exit 254
exec 3<&0 4>&1 5>&2 </dev/null 2>/dev/null
set -m
coproc XUM_AGENT { exec 1>&4 2>&5 3<&- 4>&- 5>&-; eval "$xum_payload"; }
xum_job=$XUM_AGENT_PID
set +m
unset xum_payload
eval "exec 6>&${XUM_AGENT[1]} ${XUM_AGENT[1]}>&- ${XUM_AGENT[0]}<&-"
exec 4>&- 5>&-
cat <&3 >&6 &
xum_relay=$!
exec 3<&- 6>&-
wait -n
xum_rc=$?
if kill -0 "$xum_relay"; then
  kill -KILL -- -"$xum_job"
  kill "$xum_relay"
  exit "$xum_rc"
fi
kill -TERM -- -"$xum_job"
sleep 1
kill -KILL -- -"$xum_job"
exit 0
"""
LOOKUP_TIMEOUT_S = 60.0
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _where(runtime: SshRuntime) -> str:
    from xum.runtime.container import ContainerRuntime

    if isinstance(runtime, ContainerRuntime):
        return f"the container {runtime.container}"
    return runtime.host


async def remote_program(definition: ExternalAgentDefinition, runtime: SshRuntime) -> str:
    """The command's path on the host (as `command -v` finds it with the agent's environment);
    ExternalAgentError naming the host when it is not there."""
    where = _where(runtime)
    found = bytearray()
    script = f"command -v -- {shlex.quote(definition.command)}"
    try:
        done = await runtime.exec(
            script, env=dict(definition.env), timeout_s=LOOKUP_TIMEOUT_S, on_output=found.extend
        )
    except OSError as exc:
        raise ExternalAgentError(
            f'the external agent "{definition.display}" cannot start on {where}: {exc}',
            hint=f"check that {where} answers",
        ) from None
    lines = found.decode(errors="replace").strip().splitlines()
    if done.exit_code != 0 or not lines or not lines[-1].startswith("/"):
        raise ExternalAgentError(
            f'the external agent "{definition.display}" cannot start: its command '
            f"{definition.command!r} was not found on {where} (or is not executable "
            "there)",
            hint=f'install it on {where}, or fix "command" (or PATH in "env") under '
            f"externalAgents.{definition.name} in config.json ({DOCS})",
        )
    return lines[-1]


def _payload(
    env: Mapping[str, str], cwd: str, state: list[tuple[str, StateKind]], command: str
) -> bytes:
    lines = [
        f"export {name}={shlex.quote(value)}"
        for name, value in env.items()
        if _NAME.fullmatch(name) and "\0" not in value
    ]
    lines.append(f"cd -- {shlex.quote(cwd)} || exit 1")
    for path, kind in state:
        quoted = shlex.quote(path)
        if kind == "dir":
            lines.append(f"mkdir -p -m 700 -- {quoted} 2>/dev/null")
        elif kind == "json":
            lines.append(
                f'[ -e {quoted} ] || {{ mkdir -p -- "$(dirname -- {quoted})" && '
                f"(umask 077; printf '{{}}\\n' > {quoted}); }} 2>/dev/null"
            )
    lines.append(command)
    text = "\n".join(lines) + "\n"
    if "\0" in text:
        raise ExternalAgentError("the external agent's settings contain a NUL byte")
    return text.encode() + b"\0"


def _launch_env(definition: ExternalAgentDefinition, runtime: SshRuntime) -> dict[str, str]:
    """The variables the launcher exports for the agent: the definition's `env`, over (in a
    Dev Container) what the container's commands get there: the user's probed shell
    environment and the config's `remoteEnv` (`devcontainer exec` would set them; the engine's
    own exec does not)."""
    from xum.runtime.devcontainer import DevcontainerRuntime

    if isinstance(runtime, DevcontainerRuntime):
        return {**runtime.container_env(), **definition.env}
    return dict(definition.env)


async def remote_launch(
    definition: ExternalAgentDefinition, runtime: SshRuntime, client: XumClient
) -> Launch:
    """How the agent starts on the SSH workspace's host or in the Docker workspace's container
    (see the module's docstring)."""
    from xum.runtime.ssh import client_env

    program = await remote_program(definition, runtime)
    env = _launch_env(definition, runtime)
    state = state_paths(definition, env, env.get("HOME") or runtime.home)
    layout = await agent_layout(definition, client, state)
    run = shlex.join(["exec", program, *definition.args])
    if layout is None:
        command = run
    else:
        from xum.runtime.sandbox import mount_plan, shell_for

        command = shell_for(mount_plan(layout, cwd=runtime.workspace_path), run)
    payload = _payload(env, runtime.workspace_path, state if layout is not None else [], command)
    argv = runtime.client_argv("exec bash -c " + shlex.quote(LAUNCHER))
    return Launch(argv, None, client_env(), payload)
