"""Worktree checkouts: a git worktree per workspace, on a branch named after it.

The one place a workspace's worktree is made and removed, for workspaces the user creates or
forks and for sub-agents with `isolation: "fork"` alike. Made with `git worktree add` under
`$XUM_ROOT/src/<project>/<name>` (see `xum.runtime.worktree`) from a base commit (the project's
HEAD, the source's HEAD for a fork, the parent's HEAD for a sub-agent), with the project's
`.xumignore` files copied in. Renamed with `git worktree move` (and the branch, while it still
carries the old name). Removed with `git worktree remove` after a dirty check, the branch
following the deletion's branch policy; a sub-agent's worktree that nobody needs any more is
discarded best effort, branch included.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    DirtyWorkspaceError,
    HookRoots,
    InvalidNameError,
    NewWorkspace,
    Origin,
    Removal,
    RemovalItem,
)
from xum.workspaces.checkouts.shared import local_fork_point, local_is_git, share_record
from xum.workspaces.state import scratch_dir

# `git worktree add` for siblings (a sub-agent's best of n) runs in threads; one at a time keeps
# git's own lock files (the shared config, the worktrees admin directory) out of each other's way.
_ADD_LOCK = threading.Lock()
# A record flag: the worktree checked out a branch that existed before the workspace.
BRANCH_EXISTED = "branch_existed"


class WorktreeCheckout:
    """A git worktree of the project (see the module docstring)."""

    on_this_machine = True
    shares_project_dir = False
    forks_children = True
    # The runtime its records are made with (a Dev Container checkout is a worktree too).
    record_runtime: RuntimeName = "worktree"

    def __init__(self, record: WorkspaceRecord) -> None:
        self.record = record

    @property
    def kind(self) -> RuntimeName:
        return "worktree"

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> WorktreeCheckout:
        import tempfile

        from xum.runtime.worktree import create_worktree, worktree_path
        from xum.workspaces.checkouts.xumignore import copy_ignored_files

        project = origin.project
        record = registry.create_workspace(
            project_path=str(project),
            runtime=cls.record_runtime,
            register_project=True,
            name_hint=new.name_hint,
            path_for=lambda name: worktree_path(project, name),
            title=new.title,
            exact_name=new.name,
            **new.fields,
        )
        try:
            with _ADD_LOCK:
                create_worktree(
                    project,
                    record.name,
                    temp_dir=tempfile.gettempdir(),
                    base=origin.base,
                    branch=origin.branch,
                )
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        copy_ignored_files(project, Path(record.path))
        if origin.branch is not None:
            # The user's own branch: renaming or deleting the workspace leaves it alone.
            extra = {**record.extra, BRANCH_EXISTED: True}
            record = registry.update_workspace(record.id, branch=origin.branch, extra=extra)
        else:
            record = registry.update_workspace(record.id, branch=record.name)
        ensure_private_dir(scratch_dir(record.id))
        return cls(record)

    @property
    def _branch(self) -> str:
        return self.record.branch or self.record.name

    def hook_roots(self) -> HookRoots:
        # A hook the worktree lacks (not committed yet, say) is found in the project root.
        return HookRoots(self.record.path, self.record.project_path)

    def is_git(self, known: bool | None = None) -> bool:
        return local_is_git(self.record.path, known)

    def fork_point(self) -> str | None:
        return local_fork_point(self.record.path)

    def open_runtime(self) -> Runtime:
        from xum.runtime.worktree import WorktreeRuntime

        record = self.record
        return WorktreeRuntime(
            record.path, None, project_path=record.project_path, branch=self._branch
        )

    def fork(self, new: NewWorkspace) -> Checkout:
        from xum.workspaces.checkouts.shared import project_root

        project = Path(self.record.project_path)
        base = git.head_commit(self.record.path)
        return WorktreeCheckout.create(Origin(project, project_root(project), base=base), new)

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        return share_record(self, new, WorktreeCheckout)

    def rename(self, new_name: str) -> WorkspaceRecord:
        from xum.runtime.worktree import worktree_path

        record = self.record
        project = Path(record.project_path)
        target = worktree_path(project, new_name)
        # The registry first: it is where two processes racing for one name meet.
        renamed = registry.rename_workspace(record.id, new_name, path=str(target))
        try:
            if target.exists():
                raise InvalidNameError(f"{target} already exists", hint="pick another name")
            if Path(record.path).exists():
                git.run_git(["worktree", "move", "--", record.path, str(target)], project)
        except BaseException:
            registry.rename_workspace(record.id, record.name, path=record.path)
            raise
        if not target.exists():
            return renamed
        branch = git.current_branch(target)
        own = not record.extra.get(BRANCH_EXISTED)
        if own and branch == record.name and not git.branch_exists(target, new_name):
            git.run_git(["branch", "-m", record.name, new_name], target)
            branch = new_name
        return registry.update_workspace(record.id, branch=branch)

    def dirty_files(self) -> list[str] | None:
        path = Path(self.record.path)
        return git.dirty_files(path) if path.exists() else []

    def removal(self, policy: BranchPolicy) -> Removal:
        plan = Removal(removes=[RemovalItem(kind="worktree", path=self.record.path)])
        if Path(self.record.path).exists():
            try:
                plan.dirty = git.dirty_files(self.record.path)
            except Exception as exc:
                plan.warnings.append(f"cannot tell whether the worktree is clean: {exc}")
        self._plan_branch(plan, policy)
        if plan.dirty:
            dirty = plan.dirty
            shown = ", ".join(dirty[:20]) + (
                f" and {len(dirty) - 20} more" if len(dirty) > 20 else ""
            )
            plan.warnings.append(
                f"{len(dirty)} uncommitted change(s) in the worktree will be lost: {shown}"
            )
        return plan

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        from xum.runtime.worktree import remove_worktree

        record = self.record
        project = Path(record.project_path)
        path = Path(record.path)
        done = Removal(removes=[RemovalItem(kind="worktree", path=record.path)])
        if path.exists():
            done.dirty = git.dirty_files(path)
            if done.dirty and not force:
                raise DirtyWorkspaceError(record.name, done.dirty)
            remove_worktree(project, path, force=True)  # clean, or the user said force
        else:
            git.run_git(["worktree", "prune"], project, check=False)
        item = self._plan_branch(done, policy)
        if item is None:
            return done
        name = self._branch
        try:
            git.delete_branch(project, name, force=policy == "always")
            done.branch_deleted = True
        except git.GitError as exc:
            # `merged`, and git does not consider it merged: the branch stays.
            done.removes.remove(item)
            done.keeps.append(f"branch {name}")
            done.notes.append(f"kept branch {name}: {exc.message}")
        return done

    def _plan_branch(self, plan: Removal, policy: BranchPolicy) -> RemovalItem | None:
        """Add what the policy does to the workspace branch to `plan`; the branch's removal
        item when it is to be deleted."""
        name = plan.branch = self._branch
        if policy == "never":
            plan.keeps.append(f"branch {name}")
            return None
        if self.record.extra.get(BRANCH_EXISTED):
            plan.keeps.append(f"branch {name} (it existed before the workspace)")
            return None
        if not git.branch_exists(self.record.project_path, name):
            return None
        detail = (
            "deleted even if unmerged"
            if policy == "always"
            else "deleted only if merged into the checked-out branch; kept otherwise"
        )
        item = RemovalItem(kind="branch", name=name, detail=detail)
        plan.removes.append(item)
        return item

    def discard(self) -> None:
        record = self.record
        project, path = record.project_path, record.path
        with contextlib.suppress(git.GitError):
            git.run_git(["worktree", "remove", "--force", "--", path], project, check=False)
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(git.GitError):
            git.run_git(["worktree", "prune"], project, check=False)
        if record.branch and not record.extra.get(BRANCH_EXISTED):
            with contextlib.suppress(git.GitError):
                git.run_git(["branch", "-D", "--", record.branch], project, check=False)
