"""What xum keeps on this machine for a workspace, outside its checkout.

Its session log, its scratch directory, its plan file and its init hook's log. Deleting a
workspace (by the user, or a sub-agent removed by its parent) removes all of them, and the
server's deletion preview lists the ones that exist, from this one list.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Literal

from xum.core.paths import logs_dir, xum_root
from xum.store import sessions as session_files
from xum.store.registry import WorkspaceRecord

StateKind = Literal["session-log", "scratch-dir", "plan-file", "init-log"]


def scratch_dir(workspace_id: str) -> Path:
    """`$XUM_SCRATCH_DIR` of a local or worktree workspace; removed with the workspace."""
    return xum_root() / "scratch" / workspace_id


def plan_path(record: WorkspaceRecord) -> Path:
    from xum.context.plan import plan_file_path

    return Path(plan_file_path(record.project_path, record.name))


def init_log_path(workspace_id: str) -> Path:
    return logs_dir() / "init" / f"{workspace_id}.log"


def local_state(record: WorkspaceRecord) -> list[tuple[StateKind, Path]]:
    """Every place xum keeps state for the workspace, whether it exists yet or not."""
    return [
        ("session-log", session_files.location(record.id)),
        ("scratch-dir", scratch_dir(record.id)),
        ("plan-file", plan_path(record)),
        ("init-log", init_log_path(record.id)),
    ]


def remove_local_state(record: WorkspaceRecord) -> None:
    """Delete all of it (the checkout and the registry record are the caller's)."""
    import shutil  # deleting only: its import pulls in the compression modules

    session_files.remove(record.id)
    shutil.rmtree(scratch_dir(record.id), ignore_errors=True)
    for file in (plan_path(record), init_log_path(record.id)):
        with contextlib.suppress(FileNotFoundError):
            file.unlink()
