"""Creating workspaces and opening their runtimes.

Every front-end (the CLI, the server) goes through here, so a workspace is made the same way
wherever it is asked for: a registry record first (which mints the id and name), then its
checkout; if the checkout cannot be made, the record is removed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.runtime.local import LocalRuntime
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.state import scratch_dir
from xum.workspaces.trust import trust_root_of


class ProjectPaths(NamedTuple):
    """Where a directory's project is, from one git call."""

    root: Path  # the project: its git toplevel, or the directory itself
    trust_root: Path  # where its trust and secrets are recorded (see `xum.workspaces.trust`)
    is_git: bool


def project_paths(directory: Path, query: git.WorkTreeQuery | None = None) -> ProjectPaths:
    """`project_root`, `trust_root` and whether it is a git work tree. `query`: the git call,
    started earlier for `directory` (see `git.WorkTreeQuery`)."""
    directory = directory.resolve()
    tree = git.work_tree(directory) if query is None else query.result()
    if tree is None:
        return ProjectPaths(directory, directory, False)
    return ProjectPaths(tree[0], trust_root_of(*tree), True)


def project_root(directory: Path) -> Path:
    """The project a directory belongs to: its git toplevel, or the directory itself."""
    directory = directory.resolve()
    return git.toplevel(directory) or directory


def create_workspace(
    directory: Path,
    runtime: RuntimeName,
    *,
    name_hint: str,
    title: str = "",
    name: str | None = None,
    base: str | None = None,
    project: Path | None = None,
    **fields: Any,
) -> tuple[WorkspaceRecord, Runtime]:
    """Create a local or worktree workspace (SSH ones: `xum.workspaces.lifecycle`).

    `name`: an exact name (refused when the project already has it) instead of a generated
    `<slug>-<suffix>`. `base`: the commit a worktree branches from (default: the project's HEAD).
    A worktree gets the project's `.xumignore` files copied in. Hooks are not run here: see
    `xum.workspaces.lifecycle.create_workspace`, which also starts the init hook. `project`:
    `project_root(directory)`, when the caller knows it already.
    """
    project = project or project_root(directory)
    if runtime == "local":
        # One registry write registers the project and the workspace.
        record = registry.create_workspace(
            project_path=str(project),
            runtime="local",
            register_project=True,
            name_hint=name_hint,
            path_for=lambda _name: directory.resolve(),
            title=title,
            exact_name=name,
            **fields,
        )
        ensure_private_dir(scratch_dir(record.id))
        return record, open_runtime(record)
    if runtime == "worktree":
        import tempfile

        from xum.runtime.worktree import create_worktree, worktree_path
        from xum.workspaces.xumignore import copy_ignored_files

        registry.ensure_project(str(project))
        record = registry.create_workspace(
            project_path=str(project),
            runtime="worktree",
            name_hint=name_hint,
            path_for=lambda name: worktree_path(project, name),
            title=title,
            exact_name=name,
            **fields,
        )
        try:
            create_worktree(project, record.name, temp_dir=tempfile.gettempdir(), base=base)
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        copy_ignored_files(project, Path(record.path))
        record = registry.update_workspace(record.id, branch=record.name)
        ensure_private_dir(scratch_dir(record.id))
        return record, open_runtime(record)
    raise ValueError(f"runtime {runtime!r} is not available yet")


def open_runtime(record: WorkspaceRecord) -> Runtime:
    """The runtime of a workspace. Local and worktree runtimes use the system's temp directory
    (looked up when a tool first needs it)."""
    if record.runtime == "ssh":
        from xum.runtime.ssh import SshRuntime
        from xum.workspaces.ssh_checkout import remote_scratch_path

        if not record.host:
            raise ValueError(f"workspace {record.id} is an SSH workspace without a host")
        home = str(record.extra.get("remote_home") or "")
        return SshRuntime(
            record.host,
            record.path,
            home=home or "/",
            scratch_dir=remote_scratch_path(home, record.id) if home else None,
        )
    if record.runtime == "worktree":
        from xum.runtime.worktree import WorktreeRuntime

        return WorktreeRuntime(
            record.path, None, project_path=record.project_path, branch=record.branch or record.name
        )
    return LocalRuntime(record.path)
