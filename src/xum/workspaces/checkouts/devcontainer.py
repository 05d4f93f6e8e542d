"""Dev Container checkouts: a worktree on this machine, run in the container its project's
devcontainer.json describes.

Made as a worktree checkout is (`git worktree add` under `$XUM_ROOT/src/<project>/<name>`, on a
branch named after the workspace), then `devcontainer up` starts the config's container with the
worktree bind-mounted (`devcontainer_ops.up`), and the project's git directory mounted at its
own path (the worktree's `.git` file names it), so git works in the container. Commands run in
that container (`runtime.devcontainer.DevcontainerRuntime`); the record's `path` is the worktree
here, where deleting, renaming and the dirty check run git directly.

The record keeps (in `extra`): the container's id (`container`), the engine CLI that made it
(`container_cli`), the config used (`devcontainer_config`, relative to the worktree), the
workspace folder in the container (`devcontainer_folder`), the user commands run as
(`devcontainer_user`) and its home (`container_home`), the config's resolved `remoteEnv`
(`devcontainer_remote_env`) and the user's shell environment its `userEnvProbe` found
(`devcontainer_probe_env`), which every command gets, whether the port block is published
(`container_ports_published`, see `devcontainer_ports`) and whether credentials were shared
(`container_credentials`).

Renaming changes the record and the branch, never the worktree's directory (the container's
mount names it). Deleting checks the worktree for uncommitted changes, removes the container,
then the worktree (and the branch, by the deletion's policy). Archiving stops the container,
unarchiving starts it.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from xum.runtime import git
from xum.runtime.base import Runtime
from xum.runtime.container import CONTAINER_SCRATCH, container_cli
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.container_credentials import AGENT_SOCKET
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    DirtyWorkspaceError,
    HookRoots,
    NewWorkspace,
    Origin,
    Removal,
    RemovalItem,
)
from xum.workspaces.checkouts.shared import share_record
from xum.workspaces.checkouts.worktree import WorktreeCheckout

log = logging.getLogger(__name__)

# The record's `extra` fields that opening the container again takes (a sub-agent sharing the
# checkout copies them).
_FIELDS = (
    "container",
    "container_cli",
    "container_home",
    "container_credentials",
    "devcontainer_config",
    "devcontainer_folder",
    "devcontainer_user",
    "devcontainer_remote_env",
    "devcontainer_probe_env",
)


class DevcontainerCheckout(WorktreeCheckout):
    """A worktree run in its dev container (see the module docstring)."""

    # The files are here (git runs on them here); the commands run in the container.
    on_this_machine = True
    shares_project_dir = False
    # A sub-agent's fork is a worktree with a container of its own, as a workspace fork is
    # (`fork_child`), so its commands run in the config's container too.
    forks_children = True
    record_runtime: RuntimeName = "devcontainer"

    @property
    def kind(self) -> RuntimeName:
        return "devcontainer"

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> DevcontainerCheckout:
        from xum.workspaces.checkouts import (
            container_credentials,
            devcontainer_ops,
            devcontainer_ports,
            devcontainer_probe,
        )
        from xum.workspaces.devcontainer_configs import choose_config
        from xum.workspaces.ports import block_for

        # Everything that can be refused is checked before the worktree is made.
        config = choose_config(origin.project, origin.devcontainer_config)
        tool = devcontainer_ops.devcontainer_cli()
        engine = container_cli()
        made = super().create(origin, new)
        assert isinstance(made, DevcontainerCheckout)
        record = made.record
        share = bool((new.fields.get("extra") or {}).get("container_credentials"))
        worktree = Path(record.path)
        # The worktree's copy of the config (committed), else the project's (not committed yet).
        config_file = worktree / config.path
        if not config_file.is_file():
            config_file = origin.project / config.path
        container: str | None = None
        try:
            # The worktree's `.git` file names the project's git directory by its path here:
            # mounted at that same path, git works in the container (the agent's commands, the
            # review pane), and the workspace's commits land in the project's repository.
            mounts = [
                f"type=bind,source={_git_common_dir(worktree)},target={_git_common_dir(worktree)}"
            ]
            if share:
                forwarded, note = _credential_mounts()
                mounts += forwarded
                if note:
                    log.warning("workspace %s: %s", record.id, note)
            made_up = devcontainer_ports.up(
                tool,
                engine,
                worktree,
                config_file,
                workspace_id=record.id,
                project=record.project_path,
                mounts=mounts,
                ports=block_for(record),
            )
            started = made_up.up
            container = started.container
            home = devcontainer_ops.prepare(
                engine, container, started.user, f"{CONTAINER_SCRATCH}/{record.id}"
            )
            if share:
                # As the user commands run as: a non-root remoteUser has a home of its own.
                installed = container_credentials.install(
                    engine, container, origin.project, started.user
                )
                for note in installed:
                    log.warning("workspace %s: %s", record.id, note)
            merged = devcontainer_ops.merged_configuration(
                tool,
                engine,
                worktree,
                config_file,
                workspace_id=record.id,
                project=record.project_path,
            )
            remote_env = devcontainer_ops.remote_env(merged)
            probed = devcontainer_probe.probe_env(
                engine, container, started.user, devcontainer_probe.probe_mode(merged)
            )
        except BaseException:
            if container is not None:
                from xum.workspaces.checkouts import container_ops

                with contextlib.suppress(Exception):
                    container_ops.remove_container(engine, container)
            made.discard()
            registry.remove_workspace(record.id)
            raise
        extra: dict[str, Any] = dict(
            record.extra,
            container=container,
            container_cli=engine,
            container_home=home,
            container_credentials=share,
            devcontainer_config=config.path,
            devcontainer_folder=started.folder,
            devcontainer_user=started.user,
            devcontainer_remote_env=remote_env,
            devcontainer_probe_env=probed,
            container_ports_published=made_up.published,
        )
        return cls(registry.update_workspace(record.id, extra=extra))

    def hook_roots(self) -> HookRoots:
        # Hooks run in the container, which has the worktree only (not the project root).
        return HookRoots(self.record.path, None)

    @property
    def container(self) -> str:
        name = self.record.extra.get("container")
        if not name:
            raise ValueError(
                f"workspace {self.record.id} is a Dev Container workspace without a container"
            )
        return str(name)

    @property
    def cli(self) -> str:
        return container_cli(self.record.extra.get("container_cli"))

    def open_runtime(self) -> Runtime:
        from xum.runtime.devcontainer import DevcontainerRuntime

        extra = self.record.extra
        return DevcontainerRuntime(
            self.cli,
            self.container,
            workspace_path=str(extra.get("devcontainer_folder") or self.record.path),
            host_path=self.record.path,
            home=str(extra.get("container_home") or "/root"),
            scratch_dir=f"{CONTAINER_SCRATCH}/{self.record.id}",
            user=str(extra["devcontainer_user"]) if extra.get("devcontainer_user") else None,
            base_env=_base_env(extra),
        )

    def fork(self, new: NewWorkspace) -> Checkout:
        return self.fork_child(new, git.head_commit(self.record.path))

    def fork_child(self, new: NewWorkspace, base: str | None) -> Checkout:
        """A new worktree from `base` (this one's HEAD) with its own container of the same
        config: a fork, or a fork-isolated sub-agent's workspace."""
        from xum.workspaces.checkouts.shared import project_root
        from xum.workspaces.devcontainer_configs import find_configs

        project = Path(self.record.project_path)
        used = self.record.extra.get("devcontainer_config")
        name = next((c.name for c in find_configs(project) if c.path == used), None)
        fields = dict(new.fields)
        fields["extra"] = {
            **(fields.get("extra") or {}),
            "container_credentials": bool(self.record.extra.get("container_credentials")),
        }
        origin = Origin(project, project_root(project), base=base, devcontainer_config=name)
        return DevcontainerCheckout.create(
            origin, NewWorkspace(new.name_hint, new.title, new.name, fields)
        )

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        kept = {k: self.record.extra[k] for k in _FIELDS if k in self.record.extra}
        return share_record(self, new, DevcontainerCheckout, extra=kept)

    def rename(self, new_name: str) -> WorkspaceRecord:
        # The container's bind mount names the worktree's directory: it stays where it is.
        record = self.record
        renamed = registry.rename_workspace(record.id, new_name, path=record.path)
        branch = git.current_branch(record.path)
        if branch == record.name and not git.branch_exists(record.path, new_name):
            try:
                git.run_git(["branch", "-m", record.name, new_name], record.path)
            except BaseException:
                registry.rename_workspace(record.id, record.name, path=record.path)
                raise
            branch = new_name
        return registry.update_workspace(renamed.id, branch=branch)

    def removal(self, policy: BranchPolicy) -> Removal:
        plan = super().removal(policy)
        plan.removes.insert(0, self._item())
        return plan

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        from xum.workspaces.checkouts import container_ops

        if not force:
            dirty = self.dirty_files()
            if dirty:
                raise DirtyWorkspaceError(self.record.name, dirty)
        if self.record.extra.get("container"):
            container_ops.remove_container(self.cli, self.container)
        done = super().remove(force=True, policy=policy)
        done.removes.insert(0, self._item())
        return done

    def discard(self) -> None:
        from xum.workspaces.checkouts import container_ops

        if self.record.extra.get("container"):
            with contextlib.suppress(Exception):
                container_ops.remove_container(self.cli, self.container)
        super().discard()

    def suspend(self) -> None:
        """Archiving: the container is stopped (the worktree stays)."""
        from xum.workspaces.checkouts import container_ops

        container_ops.stop_container(self.cli, self.container)

    def resume(self) -> None:
        """Unarchiving: the container is started again."""
        from xum.runtime.container import ensure_running

        ensure_running(self.cli, self.container)

    def _item(self) -> RemovalItem:
        return RemovalItem(kind="container", path=str(self.record.extra.get("container") or ""))


def _base_env(extra: dict[str, Any]) -> dict[str, str]:
    """What every command in the container gets under its own variables: the user's shell
    environment (`userEnvProbe`, run after `up`, see `devcontainer_probe`), over it the config's
    `remoteEnv` (read after `up`), and the forwarded agent's socket when credentials are
    shared (mounted by `up`; `devcontainer exec` would set all three, commands here are run by
    the engine's own exec)."""
    env: dict[str, str] = {}
    for key in ("devcontainer_probe_env", "devcontainer_remote_env"):
        stored = extra.get(key)
        if isinstance(stored, dict):
            env.update({str(k): str(v) for k, v in stored.items()})
    if extra.get("container_credentials"):
        env["SSH_AUTH_SOCK"] = AGENT_SOCKET
    return env


def _git_common_dir(worktree: Path) -> str:
    done = git.run_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], worktree)
    return done.stdout.strip()


def _credential_mounts() -> tuple[list[str], str | None]:
    """`devcontainer up --mount` values that forward the SSH agent (see container_credentials)."""
    from xum.workspaces.checkouts.container_credentials import AGENT_SOCKET, run_options

    options = run_options()
    if not options:
        return [], "no SSH agent socket here: the SSH agent is not forwarded"
    source = options[1].split(":", 1)[0]
    return [f"type=bind,source={source},target={AGENT_SOCKET}"], None
