"""Creating workspaces and opening their runtimes.

Every front-end (the CLI, the server) goes through here, so a workspace is made the same way
wherever it is asked for: a registry record first (which mints the id and name), then its
checkout; if the checkout cannot be made, the record is removed again.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from xum.core.paths import ensure_private_dir, xum_root
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.runtime.local import LocalRuntime
from xum.runtime.worktree import WorktreeRuntime, create_worktree, worktree_path
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord


def project_root(directory: Path) -> Path:
    """The project a directory belongs to: its git toplevel, or the directory itself."""
    directory = directory.resolve()
    return git.toplevel(directory) or directory


def scratch_dir(workspace_id: str) -> Path:
    """`$XUM_SCRATCH_DIR` of a local or worktree workspace; removed with the workspace."""
    return xum_root() / "scratch" / workspace_id


def create_workspace(
    directory: Path,
    runtime: RuntimeName,
    *,
    name_hint: str,
    title: str = "",
    **fields: object,
) -> tuple[WorkspaceRecord, Runtime]:
    project = project_root(directory)
    registry.ensure_project(str(project))
    if runtime == "local":
        record = registry.create_workspace(
            project_path=str(project),
            runtime="local",
            name_hint=name_hint,
            path_for=lambda _name: directory.resolve(),
            title=title,
            **fields,
        )
        ensure_private_dir(scratch_dir(record.id))
        return record, open_runtime(record)
    if runtime == "worktree":
        record = registry.create_workspace(
            project_path=str(project),
            runtime="worktree",
            name_hint=name_hint,
            path_for=lambda name: worktree_path(project, name),
            title=title,
            **fields,
        )
        try:
            create_worktree(project, record.name, temp_dir=tempfile.gettempdir())
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        record = registry.update_workspace(record.id, branch=record.name)
        ensure_private_dir(scratch_dir(record.id))
        return record, open_runtime(record)
    raise ValueError(f"runtime {runtime!r} is not available yet")


def open_runtime(record: WorkspaceRecord) -> Runtime:
    temp = tempfile.gettempdir()
    if record.runtime == "worktree":
        return WorktreeRuntime(
            record.path, temp, project_path=record.project_path, branch=record.branch or record.name
        )
    return LocalRuntime(record.path, temp)
