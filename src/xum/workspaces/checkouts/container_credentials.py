""" "Share credentials" for a Docker workspace: what of the user's git credentials goes into its
container, only when the workspace was created with it (`container_credentials` in the record;
a fork inherits it). Nothing of this happens otherwise: by default the container has only what
the image and the project's secrets give it.

* SSH agent forwarding: the agent's socket (`SSH_AUTH_SOCK` on this machine) is mounted into the
  container at `AGENT_SOCKET` and `SSH_AUTH_SOCK` points there, so git over ssh can use the
  user's keys without a key file entering the container. The socket is the one of the moment
  the container is made; with a remote engine the path is the engine host's, so the mount fails
  unless the same socket exists there.
* `~/.gitconfig` is copied to the home directory of the user commands run as (a Dev
  Container's `remoteUser`, else the container's user).
* `GH_TOKEN` from the project's secrets: `gh auth setup-git` runs in the container (when the
  image has `gh`), the token handed over in the environment of the CLI process (`exec -e
  GH_TOKEN` takes it from there), never on a command line.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from xum.runtime.container import CLI_TIMEOUT_S
from xum.runtime.ssh import client_env
from xum.store.secrets import load_project_secrets

AGENT_SOCKET = "/run/xum-ssh-agent.sock"

_GITCONFIG = 'cat > "$HOME/.gitconfig"'
_GH_SETUP = "command -v gh >/dev/null 2>&1 || exit 7; exec gh auth setup-git"


def run_options() -> list[str]:
    """`run` options that forward the SSH agent (none without an agent socket here)."""
    socket = os.environ.get("SSH_AUTH_SOCK", "")
    try:
        if not socket or not stat.S_ISSOCK(os.stat(socket).st_mode):
            return []
    except OSError:
        return []
    return ["-v", f"{socket}:{AGENT_SOCKET}", "-e", f"SSH_AUTH_SOCK={AGENT_SOCKET}"]


def install(cli: str, container: str, project: Path, user: str | None = None) -> list[str]:
    """Copy `~/.gitconfig` in and set up `gh` with the project's `GH_TOKEN`, both as `user`
    (the one commands run as, so into that user's home; else the container's own user);
    returns notes on what could not be done (never raises for those: the workspace is usable
    without them)."""
    notes = []
    gitconfig = Path.home() / ".gitconfig"
    if gitconfig.is_file():
        done = _exec(cli, container, _GITCONFIG, user=user, input=gitconfig.read_bytes())
        if done.returncode != 0:
            notes.append("~/.gitconfig could not be copied into the container")
    token = load_project_secrets(str(project)).get("GH_TOKEN")
    if token:
        done = _exec(cli, container, _GH_SETUP, user=user, extra_env={"GH_TOKEN": token})
        if done.returncode == 7:
            notes.append("the image has no gh: `gh auth setup-git` was not run")
        elif done.returncode != 0:
            notes.append("`gh auth setup-git` failed in the container")
    return notes


def _exec(
    cli: str,
    container: str,
    script: str,
    *,
    user: str | None = None,
    input: bytes = b"",
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    env = client_env()
    passed: list[str] = []
    for name, value in (extra_env or {}).items():
        env[name] = value
        passed += ["-e", name]  # the value comes from the CLI's environment, not its argv
    if user:
        passed += ["--user", user]
    return subprocess.run(
        [cli, "exec", "-i", *passed, container, "sh", "-c", script],
        input=input,
        capture_output=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
        env=env,
    )
