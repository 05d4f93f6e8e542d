"""The container runtime: commands and files inside a Docker or Podman container.

A container workspace's files live in the container (its checkout is `/src`); xum reaches them
with the container CLI's `exec`, the way the SSH runtime reaches a host with `ssh`. Everything
above the transport is the SSH runtime's (this class derives from it): the bash bootstrap that
reads the script and its environment from stdin (so neither appears in an argv or a `ps`), runs
it as a job in its own process group, and stops that group when its stdin (the lifeline) closes
on a timeout or an interrupt; and the small scripts behind file reads, writes, `stat` and
`realpath`. What differs:

* the client is `<cli> exec -i <container> sh -c <command>`, where `<cli>` is `docker` or
  `podman` (`container_cli`); the client runs with xum's environment less xum's own secrets,
  so `DOCKER_HOST`, `CONTAINER_HOST`, `CONTAINERS_CONF` and the like reach it unchanged (a
  remote engine works as the CLI itself does), provider keys never;
* a command sees the container's own environment (its image's `ENV`) plus what the caller
  passes (the `XUM_*` set and the project's secrets); `XUM_SCRATCH_DIR` is the container's
  scratch directory, not xum's local one;
* `user`: the user commands run as (`--user`), for the read-only sandbox mode (an unprivileged
  user that cannot write the checkout);
* a stopped container (after a reboot, or an archive) is started before the first command.

The image needs bash (the bootstrap) and, for the workspace's git features, git.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import BinaryIO

from xum.core.errors import XumError
from xum.runtime.base import ExecResult, OutputSink, RuntimeKind
from xum.runtime.ssh import SshRuntime, client_env

CLI_ENV = "XUM_CONTAINER_CLI"
CLI_TIMEOUT_S = 120.0
# The checkout's place in every container workspace.
CONTAINER_CHECKOUT = "/src"
# xum's files about the workspace in the container (bash spill files), one directory per id.
CONTAINER_SCRATCH = "/tmp/xum-scratch"
# An unprivileged user for the read-only sandbox mode (`nobody` in most images; the number
# works where the name is missing from /etc/passwd).
READ_ONLY_USER = "65534:65534"
# The exit status docker and podman give their own failures (no such container, no engine).
ENGINE_FAILURE_EXIT = 125


class ContainerError(XumError):
    code = "container_error"


def container_cli(recorded: str | None = None) -> str:
    """The container CLI to run: `XUM_CONTAINER_CLI` when set, else the one a workspace was
    made with (`recorded`), else `docker` when it is installed and its engine answers, else
    `podman`. Raises ContainerError when none is installed."""
    forced = os.environ.get(CLI_ENV, "").strip()
    if forced:
        if shutil.which(forced) is None:
            raise ContainerError(
                f"{CLI_ENV}={forced} is not an executable on PATH",
                hint=f"install it, or unset {CLI_ENV} to let xum pick docker or podman",
            )
        return forced
    if recorded and shutil.which(recorded) is not None:
        return recorded
    docker, podman = shutil.which("docker"), shutil.which("podman")
    if docker is not None and (podman is None or _engine_answers("docker")):
        return "docker"
    if podman is not None:
        return "podman"
    raise ContainerError(
        "neither docker nor podman is installed (the Docker runtime runs one of them)",
        hint=f"install Docker or Podman, or set {CLI_ENV} to the container CLI to use",
    )


def _engine_answers(cli: str) -> bool:
    """Whether `cli` reaches its engine: a docker client without a daemon is no use when
    podman is there instead."""
    try:
        done = subprocess.run(
            [cli, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=15,
            check=False,
            env=client_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def engine_message(cli: str, stderr: bytes) -> str:
    text = stderr.decode(errors="replace").strip() or "no message"
    return f"{cli}: {text.splitlines()[-1]}"


class ContainerRuntime(SshRuntime):
    kind: RuntimeKind = "docker"
    transport_failure_exit: int | None = ENGINE_FAILURE_EXIT

    def __init__(
        self,
        cli: str,
        container: str,
        *,
        workspace_path: str = CONTAINER_CHECKOUT,
        home: str = "/root",
        scratch_dir: str | None = None,
        user: str | None = None,
        network: bool = True,
    ) -> None:
        """`network`: whether the container has one (false: made with `--network none`)."""
        super().__init__(
            container, workspace_path, home=home, temp_dir="/tmp", scratch_dir=scratch_dir
        )
        self.cli = cli
        self.container = container
        self.user = user
        self.network = network
        self._running = False  # known to be running (checked once, before the first command)

    def __repr__(self) -> str:
        return f"ContainerRuntime({self.cli!r}, {self.container!r})"

    def as_user(self, user: str) -> ContainerRuntime:
        """The same container, its commands run as `user`."""
        other = ContainerRuntime(
            self.cli,
            self.container,
            workspace_path=self.workspace_path,
            home=self.home,
            scratch_dir=self.scratch_dir,
            user=user,
            network=self.network,
        )
        other._running = self._running
        return other

    # -- the transport ---------------------------------------------------------------------------

    def _argv(self, remote_command: str) -> list[str]:
        argv = [self.cli, "exec", "-i"]
        if self.user:
            argv += ["--user", self.user]
        return [*argv, self.container, "sh", "-c", remote_command]

    def _transport_error(self, stderr: bytes) -> OSError:
        text = stderr.decode(errors="replace").lower()
        if "no such container" in text or "no container with" in text:
            self._running = False
            return ConnectionError(
                f"the workspace's container {self.container} no longer exists (removed outside "
                "xum; delete the workspace with force and make a new one)"
            )
        return ConnectionError(engine_message(self.cli, stderr))

    def _remote_env(self, env: Mapping[str, str]) -> dict[str, str]:
        merged = dict(env)
        merged["XUM_SCRATCH_DIR"] = self.scratch_dir
        if self.user == READ_ONLY_USER:
            # git refuses a repository another user owns; reading it is all this user may do.
            merged.update(
                {
                    "GIT_CONFIG_COUNT": "1",
                    "GIT_CONFIG_KEY_0": "safe.directory",
                    "GIT_CONFIG_VALUE_0": "*",
                }
            )
        return merged

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        await self._ensure_running()
        return await super().exec(
            script, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output
        )

    async def _run(
        self,
        script: str,
        *args: str,
        input: bytes | None = None,
        stdin: BinaryIO | None = None,
        timeout_s: float = CLI_TIMEOUT_S,
    ) -> tuple[int, bytes, bytes]:
        await self._ensure_running()
        return await super()._run(script, *args, input=input, stdin=stdin, timeout_s=timeout_s)

    async def _ensure_running(self) -> None:
        if self._running:
            return
        try:
            await asyncio.to_thread(ensure_running, self.cli, self.container)
        except ContainerError as exc:
            # Like ssh's failures, an OSError: what the tools report as a failed call.
            hint = f" ({exc.hint})" if exc.hint else ""
            raise ConnectionError(f"{exc.message}{hint}") from None
        self._running = True


def container_state(cli: str, container: str) -> str | None:
    """The container's state (`running`, `exited`, `created`, ...), or None when there is no
    such container."""
    done = _cli(cli, "inspect", "--format", "{{.State.Status}}", container)
    if done.returncode != 0:
        text = done.stderr.decode(errors="replace").lower()
        if "no such" in text or "no container" in text:
            return None
        raise ContainerError(engine_message(cli, done.stderr))
    return done.stdout.decode(errors="replace").strip() or None


def ensure_running(cli: str, container: str) -> None:
    """Start the container when it is stopped; ContainerError when it is gone or cannot start."""
    state = container_state(cli, container)
    if state == "running":
        return
    if state is None:
        raise ContainerError(
            f"the workspace's container {container} no longer exists",
            hint="it was removed outside xum; delete the workspace (with force) and make a new one",
        )
    done = _cli(cli, "start", container)
    if done.returncode != 0:
        raise start_error(cli, done.stderr)


def start_error(cli: str, stderr: bytes) -> ContainerError:
    """The error for a container that would not start, naming the usual fix on machines where
    the engine's defaults do not fit (xum never edits the machine's configuration)."""
    text = stderr.decode(errors="replace").strip()
    lowered = text.lower()
    hint = f"check that `{cli} run --rm <image> true` works on this machine"
    if "rlimit" in lowered or "ulimit" in lowered or "cgroup" in lowered:
        hint = (
            "the container engine's default limits do not fit this machine. For podman, point "
            "CONTAINERS_CONF at a containers.conf of your own holding `[containers]` "
            '`default_ulimits = []` (and, with cgroups v1, `[engine]` `runtime = "runc"`), '
            "or set the same in ~/.config/containers/containers.conf"
        )
    return ContainerError(
        f"the container engine could not start the container: {engine_message(cli, stderr)}",
        hint=hint,
    )


def _cli(
    cli: str, *args: str, timeout_s: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [cli, *args],
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=client_env(),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise ContainerError(
            f"{cli} is not installed", hint=f"install it, or set {CLI_ENV} to another CLI"
        ) from None


__all__ = [
    "CONTAINER_CHECKOUT",
    "CONTAINER_SCRATCH",
    "ContainerError",
    "ContainerRuntime",
    "container_cli",
    "container_state",
    "ensure_running",
    "start_error",
]
