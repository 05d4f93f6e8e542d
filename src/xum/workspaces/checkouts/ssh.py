"""SSH checkouts: the workspace runs on a remote host, in a snapshot of the project.

Made by unpacking a `git archive` of the project's committed HEAD into
`~/xum/src/<project>/<name>` on the host (a repository with one commit there when the host has
git), or for a fork by cloning the source's remote checkout on the same host. The record keeps
what opening it again takes: the host, the remote home (`remote_home`) and whether the checkout
is a repository (`remote_git`). Renaming moves the remote directory; deleting checks it for
uncommitted changes over ssh and removes it with the workspace's remote scratch directory.

The remote commands themselves are `ssh_remote`'s; this module and they import the ssh
machinery only when an SSH workspace is opened or changed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord, project_name
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

# The record's `extra` fields a workspace on the host needs to be opened again (a sub-agent
# sharing the checkout copies them).
_REMOTE_FIELDS = ("remote_home", "remote_git")


class SshCheckout:
    """A checkout on an SSH host (see the module docstring)."""

    on_this_machine = False
    shares_project_dir = False
    # A sub-agent's fork is a local worktree branched from a local HEAD; the remote checkout
    # has neither.
    forks_children = False

    def __init__(self, record: WorkspaceRecord) -> None:
        self.record = record

    @property
    def kind(self) -> RuntimeName:
        return "ssh"

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> SshCheckout:
        if origin.host is None:
            raise ValueError("an SSH workspace needs a host")
        return cls._make(origin.project, origin.host, new, fork_of=None)

    @property
    def _host(self) -> str:
        if not self.record.host:
            raise ValueError(f"workspace {self.record.id} is an SSH workspace without a host")
        return self.record.host

    @property
    def _home(self) -> str:
        return str(self.record.extra.get("remote_home") or "")

    def hook_roots(self) -> HookRoots:
        # Hooks run on the host: only the remote checkout's own `.xum/` counts.
        return HookRoots(self.record.path, None)

    def is_git(self, known: bool | None = None) -> bool:
        recorded = self.record.extra.get("remote_git")
        if recorded is not None:
            return bool(recorded)
        return True if known is None else known  # a record from before it was kept

    def fork_point(self) -> str | None:
        return None

    def open_runtime(self) -> Runtime:
        from xum.runtime.ssh import SshRuntime
        from xum.workspaces.checkouts.ssh_remote import remote_scratch_path

        home = self._home
        return SshRuntime(
            self._host,
            self.record.path,
            home=home or "/",
            scratch_dir=remote_scratch_path(home, self.record.id) if home else None,
        )

    def fork(self, new: NewWorkspace) -> Checkout:
        from xum.workspaces.checkouts.shared import project_root

        project = project_root(Path(self.record.project_path))
        return SshCheckout._make(project, self._host, new, fork_of=self.record.path)

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        record = self.record
        if record.host:
            kept = {k: record.extra[k] for k in _REMOTE_FIELDS if k in record.extra}
            return share_record(self, new, SshCheckout, host=record.host, extra=kept)
        # A session on a workspace the registry does not know: its runtime knows the host.
        from xum.runtime.ssh import SshRuntime

        assert isinstance(runtime, SshRuntime)
        return share_record(
            self, new, SshCheckout, host=runtime.host, extra={"remote_home": runtime.home}
        )

    def rename(self, new_name: str) -> WorkspaceRecord:
        from xum.workspaces.checkouts import ssh_remote

        record = self.record
        parent = record.path.rsplit("/", 1)[0]
        target = f"{parent}/{new_name}"
        renamed = registry.rename_workspace(record.id, new_name, path=target)
        try:
            branch = ssh_remote.move_checkout(
                self._host, record.path, target, record.name, new_name
            )
        except BaseException:
            registry.rename_workspace(record.id, record.name, path=record.path)
            raise
        return registry.update_workspace(renamed.id, branch=branch) if branch else renamed

    def dirty_files(self) -> list[str] | None:
        from xum.workspaces.checkouts import ssh_remote

        return ssh_remote.dirty_files(self._host, self.record.path)

    def removal(self, policy: BranchPolicy) -> Removal:
        return Removal(
            removes=[self._item()],
            warnings=["uncommitted changes on the SSH host are checked when deleting"],
        )

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        record = self.record
        if not force:
            dirty = self.dirty_files()
            if dirty is None:
                raise DirtyWorkspaceError(record.name, ["(cannot tell: no git on the remote host)"])
            if dirty:
                raise DirtyWorkspaceError(record.name, dirty)
        self._remove()
        return Removal(removes=[self._item()])

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self._remove()

    def _item(self) -> RemovalItem:
        return RemovalItem(kind="remote-checkout", path=f"{self.record.host}:{self.record.path}")

    def _remove(self) -> None:
        from xum.workspaces.checkouts import ssh_remote

        # The workspace's remote scratch directory (spill files) goes with its checkout.
        home = self._home
        scratch = ssh_remote.remote_scratch_path(home, self.record.id) if home else None
        ssh_remote.remove_checkout(self._host, self.record.path, scratch)

    @classmethod
    def _make(
        cls, project: Path, host: str, new: NewWorkspace, *, fork_of: str | None
    ) -> SshCheckout:
        """A new SSH workspace on `host`: a snapshot of `project`'s HEAD, or with `fork_of` a
        clone of that remote checkout's HEAD."""
        from xum.runtime.ssh import SshError
        from xum.workspaces.checkouts import ssh_remote

        if git.head_commit(project) is None:
            raise ssh_remote.RemoteCheckoutError(
                f"{project} is not a git repository with commits",
                hint="SSH workspaces ship a git archive of the committed HEAD; commit first",
            )
        registry.ensure_project(str(project))
        try:
            home = ssh_remote.remote_home(host)
        except SshError as exc:
            raise ssh_remote.RemoteCheckoutError(
                str(exc),
                hint=f"check that `ssh {host} true` works without a prompt (xum runs ssh in batch "
                "mode: keys or an agent, and a known host key)",
            ) from None
        name = project_name(str(project))
        record = registry.create_workspace(
            project_path=str(project),
            runtime="ssh",
            name_hint=new.name_hint,
            path_for=lambda n: ssh_remote.remote_workspace_path(home, name, n),
            title=new.title,
            exact_name=new.name,
            host=host,
            **new.fields,
        )
        try:
            if fork_of is None:
                has_git = ssh_remote.push_checkout(project, host, record.path, record.name)
            else:
                ssh_remote.fork_checkout(host, fork_of, record.path, record.name)
                has_git = True
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        extra: dict[str, Any] = dict(record.extra, remote_home=home, remote_git=has_git)
        ensure_private_dir(scratch_dir(record.id))
        return cls(
            registry.update_workspace(
                record.id, branch=record.name if has_git else None, extra=extra
            )
        )
