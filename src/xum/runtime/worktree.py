"""Worktree workspaces: a git worktree per workspace under `$XUM_ROOT/src/<project>/<name>`.

The worktree shares the project's `.git`, so its commits are visible from the main checkout at
once, while its files are its own. Creating one never touches the main checkout's HEAD, index
or files. Lifecycle operations (rename, fork, archive) build on these two functions.
"""

from __future__ import annotations

import os
from pathlib import Path

from xum.core.errors import XumError
from xum.core.paths import ensure_private_dir, ensure_root, src_dir
from xum.runtime import git
from xum.runtime.base import RuntimeKind
from xum.runtime.local import LocalRuntime


class WorktreeError(XumError):
    code = "worktree_error"


class WorktreeRuntime(LocalRuntime):
    kind: RuntimeKind = "worktree"

    def __init__(
        self, workspace_path: str, temp_dir: str | None, *, project_path: str, branch: str
    ):
        super().__init__(workspace_path, temp_dir)
        self.project_path = project_path
        self.branch = branch


def worktree_path(project_path: str | Path, workspace_name: str) -> Path:
    """Where a project's workspace checkout lives: `$XUM_ROOT/src/<project-name>/<name>`."""
    return src_dir() / Path(project_path).resolve().name / workspace_name


def create_worktree(
    project_path: str | Path,
    workspace_name: str,
    *,
    temp_dir: str,
    base: str | None = None,
    branch: str | None = None,
) -> WorktreeRuntime:
    """`git worktree add -b <workspace_name> <path> <base>`; base defaults to the project's HEAD.

    The branch is named after the workspace. Refuses (WorktreeError) when the project is not a
    git work tree, has no commits, or the branch or the directory already exists. `branch`: an
    existing branch to check out instead (`git worktree add <path> <branch>`; `base` unused),
    refused when it does not exist or another worktree has it checked out.
    """
    project = Path(project_path).resolve()
    top = git.toplevel(project)
    if top is None:
        raise WorktreeError(
            f"{project} is not a git repository",
            hint="worktree workspaces need git; run `git init` and commit, or use the local runtime",
        )
    if _unsafe_name(workspace_name) or not git.is_valid_branch_name(top, workspace_name):
        raise WorktreeError(
            f"{workspace_name!r} cannot name a workspace branch and directory",
            hint="use letters, digits, '-', '_' and '.', without '/' or a leading '-' or '.'",
        )
    if branch is not None:
        return _check_out_existing(top, workspace_name, branch, temp_dir)
    start = base or git.head_commit(top)
    if start is None:
        raise WorktreeError(
            f"{top} has no commits yet",
            hint="make a first commit; a worktree branches off an existing commit",
        )
    if git.branch_exists(top, workspace_name):
        raise WorktreeError(
            f"branch {workspace_name!r} already exists in {top}",
            hint="pick another workspace name, or delete the branch",
        )
    target = _free_target(top, workspace_name)
    git.run_git(["worktree", "add", "-b", workspace_name, "--", str(target), start], top)
    return WorktreeRuntime(str(target), temp_dir, project_path=str(top), branch=workspace_name)


def _free_target(top: Path, workspace_name: str) -> Path:
    """Where the workspace's checkout goes, refused when something is there; its parents made."""
    target = worktree_path(top, workspace_name)
    if os.path.lexists(target):
        raise WorktreeError(
            f"{target} already exists", hint="pick another workspace name, or remove the directory"
        )
    ensure_root()
    ensure_private_dir(src_dir())
    ensure_private_dir(target.parent)
    return target


def _check_out_existing(
    top: Path, workspace_name: str, branch: str, temp_dir: str
) -> WorktreeRuntime:
    if not git.branch_exists(top, branch):
        raise WorktreeError(
            f"there is no branch {branch!r} in {top}",
            hint="`git branch --list` shows the branches; leave the name empty for a new one",
        )
    target = _free_target(top, workspace_name)
    try:
        git.run_git(["worktree", "add", "--", str(target), branch], top)
    except git.GitError as exc:
        raise WorktreeError(
            f"cannot check out branch {branch!r} in a new worktree: {exc}",
            hint="a branch is checked out in one worktree at a time: switch the other checkout "
            "to another branch, or name a new branch",
        ) from None
    return WorktreeRuntime(str(target), temp_dir, project_path=str(top), branch=branch)


def remove_worktree(project_path: str | Path, path: str | Path, *, force: bool = False) -> None:
    """`git worktree remove`: refuses a checkout with uncommitted changes unless `force`.

    The branch stays (its commits may be all that is left of the work); delete it with
    `git.delete_branch` when that is what the user asked for.
    """
    args = ["worktree", "remove"]
    if force:
        args.append("--force")
    git.run_git([*args, "--", str(path)], Path(project_path).resolve())


def _unsafe_name(name: str) -> bool:
    return not name or "/" in name or "\\" in name or name.startswith((".", "-")) or "\0" in name
