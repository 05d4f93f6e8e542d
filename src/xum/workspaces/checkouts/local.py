"""Local checkouts: the workspace runs in the project directory itself.

Nothing is made for a local workspace but its record (and its scratch directory): its files are
the user's own project directory, shared with every other local workspace of the project. So
renaming one renames the record only, and deleting one never touches the directory; a fork is
another local workspace in the same directory. This is the kind `xum run` makes on every start,
so this module imports nothing that only other kinds need.
"""

from __future__ import annotations

from pathlib import Path

from xum.core.paths import ensure_private_dir
from xum.runtime.base import Runtime
from xum.runtime.local import LocalRuntime
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    HookRoots,
    NewWorkspace,
    Origin,
    Removal,
)
from xum.workspaces.checkouts.shared import local_fork_point, local_is_git, share_record
from xum.workspaces.state import scratch_dir


class LocalCheckout:
    """The project directory (see the module docstring)."""

    on_this_machine = True
    shares_project_dir = True
    forks_children = True  # a sub-agent's fork is a worktree of the project

    def __init__(self, record: WorkspaceRecord) -> None:
        self.record = record

    @property
    def kind(self) -> RuntimeName:
        return "local"

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> LocalCheckout:
        # One registry write registers the project and the workspace.
        record = registry.create_workspace(
            project_path=str(origin.project),
            runtime="local",
            register_project=True,
            name_hint=new.name_hint,
            path_for=lambda _name: origin.directory.resolve(),
            title=new.title,
            exact_name=new.name,
            **new.fields,
        )
        ensure_private_dir(scratch_dir(record.id))
        return cls(record)

    def hook_roots(self) -> HookRoots:
        # `.xum/` is the project root's, even when the workspace runs in a subdirectory.
        return HookRoots(self.record.project_path, None)

    def is_git(self, known: bool | None = None) -> bool:
        return local_is_git(self.record.path, known)

    def fork_point(self) -> str | None:
        return local_fork_point(self.record.path)

    def open_runtime(self) -> Runtime:
        # The system's temp directory, looked up when a tool first needs it.
        return LocalRuntime(self.record.path)

    def fork(self, new: NewWorkspace) -> Checkout:
        from xum.workspaces.checkouts.shared import project_root

        directory = Path(self.record.path)
        return LocalCheckout.create(Origin(directory, project_root(directory)), new)

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        return share_record(self, new, LocalCheckout)

    def rename(self, new_name: str) -> WorkspaceRecord:
        return registry.rename_workspace(self.record.id, new_name)

    def dirty_files(self) -> list[str] | None:
        return []  # deleting the workspace leaves the directory, changes and all

    def removal(self, policy: BranchPolicy) -> Removal:
        path = self.record.path
        return Removal(keeps=[f"the project directory {path} (a local workspace runs in it)"])

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        return self.removal(policy)

    def discard(self) -> None:
        return None
