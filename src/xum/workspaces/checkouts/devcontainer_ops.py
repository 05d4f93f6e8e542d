"""What making a Dev Container workspace runs: the Dev Container CLI's `up`, and a check of the
container it made.

The CLI (`@devcontainers/cli`, a node program) is found as: `XUM_DEVCONTAINER_CLI` when set,
else `devcontainer` on PATH, else the copy `make devcontainer-cli` installs in this source tree
(`tools/devcontainer/node_modules/.bin/devcontainer`). It drives the same container engine the
Docker runtime picks (`container_cli`: docker or podman), handed over with `--docker-path`.

`up` labels the container with the workspace's id and project (`--id-label`, the labels the
Docker runtime's containers carry), so the CLI finds that very container again for the same
labels, and two workspaces of one project never share one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from xum.runtime.container import ContainerError
from xum.runtime.ssh import client_env
from xum.workspaces.checkouts.container_ops import LABEL as WORKSPACE_LABEL
from xum.workspaces.checkouts.container_ops import PROJECT_LABEL, exec_sh

CLI_ENV = "XUM_DEVCONTAINER_CLI"
# `up` may build an image: give it longer than a container CLI call.
UP_TIMEOUT_S = 900.0
READ_TIMEOUT_S = 120.0
# The copy `make devcontainer-cli` installs, relative to the source tree's root.
LOCAL_INSTALL = Path("tools/devcontainer/node_modules/.bin/devcontainer")
INSTALL_HINT = (
    "install the Dev Container CLI: `npm install -g @devcontainers/cli`, or `make "
    f"devcontainer-cli` in xum's source tree; or set {CLI_ENV} to its path"
)

# Checks the container has bash (every command runs in it), makes xum's scratch directory,
# prints the home directory of the user commands run as.
_PREPARE = 'command -v bash >/dev/null 2>&1 || exit 5; mkdir -p "$1" && printf %s "$HOME"'


class UpFailed(ContainerError):
    """`devcontainer up` failed; `container`: the one it made anyway (created, not started),
    `output`: what the CLI said (its message and its log)."""

    def __init__(self, message: str, *, hint: str, container: str | None, output: str) -> None:
        super().__init__(message, hint=hint)
        self.container = container
        self.output = output


@dataclass(frozen=True)
class UpResult:
    container: str  # the container's id
    folder: str  # the workspace folder in the container (remoteWorkspaceFolder)
    user: str | None  # the user commands run as (remoteUser)


def devcontainer_cli() -> str:
    """The Dev Container CLI to run (see the module docstring); ContainerError when none."""
    forced = os.environ.get(CLI_ENV, "").strip()
    if forced:
        found = shutil.which(forced)
        if found is None:
            raise ContainerError(f"{CLI_ENV}={forced} is not an executable", hint=INSTALL_HINT)
        return found
    on_path = shutil.which("devcontainer")
    if on_path is not None:
        return on_path
    # xum's source tree: src/xum/workspaces/checkouts/ -> four levels up.
    local = Path(__file__).resolve().parents[4] / LOCAL_INSTALL
    if os.access(local, os.X_OK):
        return str(local)
    raise ContainerError("the Dev Container CLI (devcontainer) is not installed", hint=INSTALL_HINT)


def up(
    devcontainer: str,
    engine: str,
    folder: Path,
    config: Path,
    *,
    workspace_id: str,
    project: str,
    mounts: list[str] | None = None,
    override: Path | None = None,
) -> UpResult:
    """`devcontainer up` for the worktree `folder` with `config`; the container it started.
    `override`: a file read instead of `config` (`--override-config`; relative paths in it
    still resolve against `config`'s folder). UpFailed when the CLI reports a failure."""
    argv = [
        devcontainer, "up",
        "--workspace-folder", str(folder),
        "--config", str(config),
        "--docker-path", engine,
        "--id-label", f"{WORKSPACE_LABEL}={workspace_id}",
        "--id-label", f"{PROJECT_LABEL}={project}",
    ]  # fmt: skip
    for mount in mounts or []:
        argv += ["--mount", mount]
    if override is not None:
        argv += ["--override-config", str(override)]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=UP_TIMEOUT_S,
            check=False,
            env=client_env(),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise ContainerError(f"{devcontainer} is not installed", hint=INSTALL_HINT) from None
    except subprocess.TimeoutExpired:
        raise ContainerError(
            f"`devcontainer up` did not finish within {UP_TIMEOUT_S:.0f} s",
            hint="try `devcontainer up --workspace-folder <project>` yourself to see why",
        ) from None
    result = _outcome(done.stdout)
    if done.returncode != 0 or result.get("outcome") != "success":
        said = str(result.get("message") or result.get("description") or "")
        if not said:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            said = lines[-1] if lines else "no message"
        raise UpFailed(
            f"`devcontainer up` failed: {said}",
            hint=f"check that `devcontainer up --docker-path {engine} --workspace-folder "
            "<project>` works for this project's devcontainer.json",
            container=str(result.get("containerId") or "") or None,
            output=f"{said}\n{done.stderr.decode(errors='replace')}",
        )
    container = str(result.get("containerId") or "")
    remote = str(result.get("remoteWorkspaceFolder") or "")
    if not container or not remote.startswith("/"):
        raise ContainerError("`devcontainer up` did not say which container it started")
    user = result.get("remoteUser")
    return UpResult(container, remote, str(user) if user else None)


def merged_configuration(
    devcontainer: str,
    engine: str,
    folder: Path,
    config: Path,
    *,
    workspace_id: str,
    project: str,
) -> dict[str, object]:
    """The configuration as `devcontainer exec` would apply it, read once after `up`:
    `read-configuration --include-merged-configuration` finds the container by the same labels
    and resolves `${containerEnv:...}` against it (and the image's metadata merged in). The CLI
    runs with xum's own secrets left out of its environment, so `${localEnv:...}` never brings
    a provider key in. ContainerError when the CLI fails."""
    argv = [
        devcontainer, "read-configuration",
        "--include-merged-configuration",
        "--workspace-folder", str(folder),
        "--config", str(config),
        "--docker-path", engine,
        "--id-label", f"{WORKSPACE_LABEL}={workspace_id}",
        "--id-label", f"{PROJECT_LABEL}={project}",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=READ_TIMEOUT_S, check=False, env=client_env(),
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (FileNotFoundError, subprocess.TimeoutExpired):
        done = None
    merged = _outcome(done.stdout).get("mergedConfiguration") if done is not None else None
    if done is None or done.returncode != 0 or not isinstance(merged, dict):
        raise ContainerError(
            "could not read the dev container's configuration (for its remoteEnv)",
            hint=f"check that `devcontainer read-configuration --docker-path {engine} "
            "--workspace-folder <project>` works for this project's devcontainer.json",
        )
    return merged


def remote_env(merged: dict[str, object]) -> dict[str, str]:
    """The merged configuration's `remoteEnv`; a variable set to null (unset it) is left out."""
    found = merged.get("remoteEnv")
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items() if v is not None}


def _outcome(stdout: bytes) -> dict[str, object]:
    # The CLI prints its result as the last JSON line on stdout.
    for line in reversed(stdout.decode(errors="replace").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def prepare(engine: str, container: str, user: str | None, scratch: str) -> str:
    """Check the container has bash and make xum's scratch directory in it; its user's home."""
    done = exec_sh(engine, container, _PREPARE, scratch, user=user, timeout_s=120)
    if done.returncode == 5:
        raise ContainerError(
            "the dev container has no bash (xum runs every command with it)",
            hint="use an image with bash in the devcontainer.json",
        )
    if done.returncode != 0:
        text = done.stderr.decode(errors="replace").strip() or "no message"
        raise ContainerError(f"could not prepare the dev container: {text.splitlines()[-1]}")
    return done.stdout.decode(errors="replace").strip() or "/root"


__all__ = [
    "CLI_ENV",
    "UpFailed",
    "UpResult",
    "devcontainer_cli",
    "merged_configuration",
    "prepare",
    "remote_env",
    "up",
]
