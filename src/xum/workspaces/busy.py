"""Is a workspace busy? Its session's `writer.lock` says so, across processes.

A turn holds the session log's writer lock from start to end (`AgentSession.run_turn`), so the
lock being held means an agent is streaming or running tools in that workspace, in this process
or in any other xum process sharing `$XUM_ROOT`. Lifecycle operations that would pull the
checkout from under a turn (rename, delete, archive) take the same lock for their duration, so a
turn cannot start halfway through them either.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from xum.core.errors import XumError
from xum.core.lock import LockTimeout, describe_holder
from xum.store import registry
from xum.store import sessions as session_files
from xum.store.registry import WorkspaceRecord
from xum.workspaces.checkouts.factory import checkout_for


class WorkspaceBusyError(XumError):
    code = "workspace_busy"


def is_streaming(workspace_id: str) -> bool:
    return session_files.is_busy(workspace_id)


@contextlib.contextmanager
def hold_workspace(record: WorkspaceRecord, action: str) -> Iterator[None]:
    """Hold the workspace's writer lock for a lifecycle operation; refuse at once (naming the
    holder) when a turn or another operation holds it."""
    lock = session_files.writer_lock(record.id, purpose=f"{action} workspace")
    try:
        lock.acquire(timeout=0)
    except LockTimeout as exc:
        raise WorkspaceBusyError(
            f"cannot {action} workspace '{record.name}': it is busy "
            f"({describe_holder(exc.holder)} is using it)",
            hint="wait for its turn to finish, or interrupt it, and try again",
        ) from None
    try:
        yield
    finally:
        lock.release()


def streaming_local_siblings(record: WorkspaceRecord) -> list[WorkspaceRecord]:
    """Other workspaces running in the project directory itself (local ones) with a turn
    running right now: they edit the very same files as `record`."""
    return [
        other
        for other in registry.list_workspaces(record.project_path)
        if other.id != record.id
        and other.archived_at is None
        and checkout_for(other).shares_project_dir
        and is_streaming(other.id)
    ]
