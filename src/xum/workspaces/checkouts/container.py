"""Docker checkouts: the workspace runs in a container of its own, its files at `/src`.

Made by starting a container of the chosen image (`container_ops.start_container`) and syncing
a git bundle of the project's committed HEAD into it on a branch named after the workspace; a
fork is a new container of the same image that gets the source container's committed HEAD the
same way, and so is a fork-isolated sub-agent's workspace (`fork_child`). The record keeps what
opening it again takes (in `extra`): the image
(`container_image`), the container (`container`), the CLI that made it (`container_cli`:
`docker` or `podman`), the container's home (`container_home`), and whether it has a network
(`container_network`: false when the sandbox's egress was off at creation, `--network none`), and
whether the user's credentials were shared with it (`container_credentials`, see
`container_credentials`). The workspace's port block is published on this machine's loopback at
the same numbers (`container_ports_published`), so a dev server the agent starts on `$XUM_PORT`
in the container answers on `localhost:$XUM_PORT` here.

Renaming changes the record and the branch (the container and `/src` keep their names);
deleting checks `/src` for uncommitted changes and removes the container; archiving stops it
and unarchiving starts it again (`suspend`, `resume`).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.runtime.container import CONTAINER_CHECKOUT, CONTAINER_SCRATCH, container_cli
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
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
from xum.workspaces.state import scratch_dir

log = logging.getLogger(__name__)

# The record's `extra` fields that opening the container again takes (a sub-agent sharing the
# checkout copies them).
_CONTAINER_FIELDS = (
    "container",
    "container_image",
    "container_cli",
    "container_home",
    "container_network",
)


class ContainerCheckout:
    """A checkout in a container (see the module docstring)."""

    on_this_machine = False
    shares_project_dir = False
    # A sub-agent's fork is a container of its own, made as a workspace fork is (`fork_child`).
    forks_children = True

    def __init__(self, record: WorkspaceRecord) -> None:
        self.record = record

    @property
    def kind(self) -> RuntimeName:
        return "docker"

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> ContainerCheckout:
        if origin.image is None:
            raise ValueError("a Docker workspace needs an image")
        return cls._make(origin.project, origin.image, new, fork_of=None)

    @property
    def container(self) -> str:
        name = self.record.extra.get("container")
        if not name:
            raise ValueError(
                f"workspace {self.record.id} is a Docker workspace without a container"
            )
        return str(name)

    @property
    def cli(self) -> str:
        return container_cli(self.record.extra.get("container_cli"))

    @property
    def network(self) -> bool:
        return bool(self.record.extra.get("container_network", True))

    def hook_roots(self) -> HookRoots:
        # Hooks run in the container: only its checkout's own `.xum/` counts.
        return HookRoots(self.record.path, None)

    def is_git(self, known: bool | None = None) -> bool:
        return True  # the checkout is always a repository (a bundle fetched into /src)

    def fork_point(self) -> str | None:
        """HEAD of the container's checkout (one `exec`); None without commits."""
        from xum.workspaces.checkouts import container_ops

        return container_ops.head_commit(self.cli, self.container)

    def open_runtime(self) -> Runtime:
        from xum.runtime.container import ContainerRuntime

        return ContainerRuntime(
            self.cli,
            self.container,
            workspace_path=self.record.path,
            home=str(self.record.extra.get("container_home") or "/root"),
            scratch_dir=f"{CONTAINER_SCRATCH}/{self.record.id}",
            network=self.network,
        )

    def fork(self, new: NewWorkspace) -> Checkout:
        from xum.workspaces.checkouts.shared import project_root

        project = project_root(Path(self.record.project_path))
        image = str(self.record.extra.get("container_image") or "")
        if not image:
            raise ValueError(f"workspace {self.record.id} does not record its container image")
        return ContainerCheckout._make(project, image, new, fork_of=self)

    def fork_child(self, new: NewWorkspace, base: str) -> Checkout:
        """A fork-isolated sub-agent's workspace: a container of its own from this one's
        committed HEAD, as a fork is. `base` (the HEAD the caller read as the fork point) is
        what the fork gets: the parent is waiting in its `task` call, so nothing commits in
        between."""
        return self.fork(new)

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        record = self.record
        kept = {k: record.extra[k] for k in _CONTAINER_FIELDS if k in record.extra}
        if not kept:
            # A session on a workspace the registry does not know: its runtime knows the
            # container.
            from xum.runtime.container import ContainerRuntime

            assert isinstance(runtime, ContainerRuntime)
            kept = {"container": runtime.container, "container_cli": runtime.cli}
        return share_record(self, new, ContainerCheckout, extra=kept)

    def rename(self, new_name: str) -> WorkspaceRecord:
        from xum.workspaces.checkouts import container_ops

        record = self.record
        renamed = registry.rename_workspace(record.id, new_name, path=record.path)
        try:
            branch = container_ops.rename_branch(self.cli, self.container, record.name, new_name)
        except BaseException:
            registry.rename_workspace(record.id, record.name, path=record.path)
            raise
        return registry.update_workspace(renamed.id, branch=branch) if branch else renamed

    def dirty_files(self) -> list[str] | None:
        from xum.workspaces.checkouts import container_ops

        return container_ops.dirty_files(self.cli, self.container)

    def removal(self, policy: BranchPolicy) -> Removal:
        return Removal(
            removes=[self._item()],
            warnings=["uncommitted changes in the container are checked when deleting"],
        )

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        from xum.workspaces.checkouts import container_ops

        if not force:
            dirty = self.dirty_files()
            if dirty is None:
                raise DirtyWorkspaceError(self.record.name, ["(cannot tell: git failed)"])
            if dirty:
                raise DirtyWorkspaceError(self.record.name, dirty)
        container_ops.remove_container(self.cli, self.container)
        return Removal(removes=[self._item()])

    def discard(self) -> None:
        from xum.workspaces.checkouts import container_ops

        with contextlib.suppress(Exception):
            container_ops.remove_container(self.cli, self.container)

    def suspend(self) -> None:
        """Archiving: the container is stopped (its files are kept)."""
        from xum.workspaces.checkouts import container_ops

        container_ops.stop_container(self.cli, self.container)

    def resume(self) -> None:
        """Unarchiving: the container is started again."""
        from xum.runtime.container import ensure_running

        ensure_running(self.cli, self.container)

    def _item(self) -> RemovalItem:
        return RemovalItem(
            kind="container", path=f"{self.record.extra.get('container')}:{self.record.path}"
        )

    @classmethod
    def _make(
        cls, project: Path, image: str, new: NewWorkspace, *, fork_of: ContainerCheckout | None
    ) -> ContainerCheckout:
        """A new Docker workspace: a container of `image` with `project`'s HEAD, or with
        `fork_of` that workspace's container's HEAD, in `/src`."""
        from xum.workspaces.checkouts import container_credentials, container_ops
        from xum.workspaces.ports import block_for
        from xum.workspaces.safety.choice import DEFAULT_CHOICE, sandbox_settings

        if git.head_commit(project) is None:
            from xum.runtime.container import ContainerError

            raise ContainerError(
                f"{project} is not a git repository with commits",
                hint="Docker workspaces start from a git bundle of the committed HEAD; commit "
                "first",
            )
        cli = container_cli(fork_of.record.extra.get("container_cli") if fork_of else None)
        # "Share credentials" was asked for at creation (a fork inherits the choice).
        asked = (fork_of.record.extra if fork_of else new.fields.get("extra") or {}).get(
            "container_credentials"
        )
        share = bool(asked)
        # The sandbox's egress setting decides the container's network once, at creation.
        network = sandbox_settings(DEFAULT_CHOICE).egress != "off"
        registry.ensure_project(str(project))
        record = registry.create_workspace(
            project_path=str(project),
            runtime="docker",
            name_hint=new.name_hint,
            path_for=lambda _name: CONTAINER_CHECKOUT,
            title=new.title,
            exact_name=new.name,
            **new.fields,
        )
        name = container_ops.container_name(record.id)
        try:
            published = container_ops.start_container(
                cli,
                image,
                name,
                workspace_id=record.id,
                project=str(project),
                network=network,
                options=container_credentials.run_options() if share else (),
                ports=block_for(record),
            )
            try:
                home = container_ops.prepare(cli, name, f"{CONTAINER_SCRATCH}/{record.id}")
                if share:
                    for note in container_credentials.install(cli, name, project):
                        log.warning("workspace %s: %s", record.id, note)
                if fork_of is None:
                    container_ops.push_project(cli, name, project, record.name)
                else:
                    container_ops.fork_project(
                        cli,
                        fork_of.container,
                        name,
                        project,
                        record.name,
                        fork_of.record.branch or "main",
                    )
            except BaseException:
                container_ops.remove_container(cli, name)
                raise
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        extra: dict[str, Any] = dict(
            record.extra,
            container=name,
            container_image=image,
            container_cli=cli,
            container_home=home,
            container_network=network,
            container_credentials=share,
            container_ports_published=published,
        )
        ensure_private_dir(scratch_dir(record.id))
        return cls(registry.update_workspace(record.id, branch=record.name, extra=extra))
