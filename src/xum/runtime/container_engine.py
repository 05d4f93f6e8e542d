"""Whether a container engine is available here, for the new-workspace dialogs.

The browser's and the terminal UI's dialogs offer the Docker runtime only when a container CLI
is installed and its engine answers: a choice that could only fail is left out rather than
shown broken. The probe is the one a Docker workspace's creation depends on: the CLI that
`container_cli` picks (`XUM_CONTAINER_CLI`, else docker when its engine answers, else podman),
asked for its engine's version with xum's environment less xum's own keys, so a remote engine
(`DOCKER_HOST`, docker contexts, `CONTAINER_HOST`, podman connections, `ssh://` included)
counts as available exactly when a workspace could be made on it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from xum.runtime.container import ContainerError, container_cli
from xum.runtime.ssh import client_env

PROBE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class EngineInfo:
    """`available`: the engine answered; `cli`: docker or podman (None when neither is
    installed); `version`: the engine's (server's) version; `problem`: why it is not available."""

    available: bool
    cli: str | None
    version: str | None = None
    problem: str | None = None


def probe_engine(timeout_s: float = PROBE_TIMEOUT_S) -> EngineInfo:
    """Ask the container CLI xum would use for its engine's version (blocking: run it in a
    thread from async code)."""
    try:
        cli = container_cli()
    except ContainerError as exc:
        return EngineInfo(False, None, problem=exc.message)
    try:
        done = subprocess.run(
            [cli, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=client_env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return EngineInfo(False, cli, problem=f"{cli} did not answer in {timeout_s:.0f} s")
    except OSError as exc:
        return EngineInfo(False, cli, problem=f"{cli} could not run: {exc}")
    version = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not version:
        text = done.stderr.decode(errors="replace").strip().splitlines()
        reason = text[-1] if text else f"exit status {done.returncode}"
        return EngineInfo(False, cli, problem=f"{cli} cannot reach its engine: {reason}")
    return EngineInfo(True, cli, version=version.splitlines()[0])


__all__ = ["EngineInfo", "probe_engine"]
