"""The Dev Container runtime: commands inside the container a project's devcontainer.json
describes, its files a worktree on this machine bind-mounted into it.

The container is made by the Dev Container CLI (`devcontainer up`, see
`workspaces.checkouts.devcontainer_ops`); what runs commands afterwards is the container CLI's
`exec` into the container `up` reported, as the Docker runtime does (this class derives from
`ContainerRuntime`). `devcontainer exec` would do the same job a node process later: measured on
this project's test machine, a trivial command took about 1.3 s through `devcontainer exec` and
about 0.15 s through `podman exec`, and an agent's turn runs many commands. What `devcontainer
exec` adds on top is done here: the user's shell environment (`userEnvProbe`) and over it the
config's `remoteEnv`, both found once after `up`, are `base_env` (the checkout passes them).
`containerEnv` is part of the container and applies.

Paths are translated: the worktree is `host_path` here and `workspace_path` in the container
(`/workspaces/<name>` by default, or the same path when the config mounts it there). A path under
the host worktree that reaches this runtime (an init hook's working directory, a path a front-end
shows) is read as the same file in the container; every other path is the container's own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from xum.runtime.base import RuntimeKind
from xum.runtime.container import ContainerRuntime


class DevcontainerRuntime(ContainerRuntime):
    kind: RuntimeKind = "devcontainer"

    def __init__(
        self,
        cli: str,
        container: str,
        *,
        workspace_path: str,
        host_path: str,
        home: str = "/root",
        scratch_dir: str | None = None,
        user: str | None = None,
        network: bool = True,
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        """`host_path`: the worktree on this machine; `base_env`: variables every command gets
        (under what the caller passes)."""
        super().__init__(
            cli,
            container,
            workspace_path=workspace_path,
            home=home,
            scratch_dir=scratch_dir,
            user=user,
            network=network,
        )
        self.host_path = posixpath.normpath(host_path)
        self.base_env = dict(base_env or {})

    def __repr__(self) -> str:
        return f"DevcontainerRuntime({self.cli!r}, {self.container!r}, {self.workspace_path!r})"

    def as_user(self, user: str) -> DevcontainerRuntime:
        other = DevcontainerRuntime(
            self.cli,
            self.container,
            workspace_path=self.workspace_path,
            host_path=self.host_path,
            home=self.home,
            scratch_dir=self.scratch_dir,
            user=user,
            network=self.network,
            base_env=self.base_env,
        )
        other._running = self._running
        return other

    def to_container(self, path: str) -> str:
        """`path` as the container sees it: the host worktree's prefix becomes the container's
        workspace folder; any other path is unchanged."""
        if path == self.host_path:
            return self.workspace_path
        if path.startswith(self.host_path + "/"):
            return self.workspace_path + path[len(self.host_path) :]
        return path

    def to_host(self, path: str) -> str:
        """The inverse of `to_container`: a path in the container's workspace folder as the
        worktree on this machine."""
        if path == self.workspace_path:
            return self.host_path
        if path.startswith(self.workspace_path.rstrip("/") + "/"):
            return self.host_path + path[len(self.workspace_path.rstrip("/")) :]
        return path

    def container_env(self) -> dict[str, str]:
        """What everything xum starts in the container gets under its own variables: its
        commands, and an external agent's process (`xum.workspaces.external.remote`)."""
        return {
            # The worktree is a bind mount of files owned by whoever owns them here, often not
            # the container's user: git would refuse it as a repository someone else owns.
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
            **self.base_env,
        }

    def _remote_env(self, env: Mapping[str, str]) -> dict[str, str]:
        return super()._remote_env({**self.container_env(), **env})

    def _expand(self, path: str) -> str:
        # Every path operation (resolve, exec's cwd, the file scripts) goes through here.
        return super()._expand(self.to_container(path))


__all__ = ["DevcontainerRuntime"]
