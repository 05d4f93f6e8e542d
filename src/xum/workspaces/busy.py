"""Is a workspace busy? Its session's `writer.lock` says so, across processes.

A turn holds the session log's writer lock from start to end (`AgentSession.run_turn`), so the
lock being held means an agent is streaming or running tools in that workspace, in this process
or in any other xum process sharing `$XUM_ROOT`. Lifecycle operations that would pull the
checkout from under a turn (rename, delete, archive) take the same lock for their duration, so a
turn cannot start halfway through them either.
"""

from __future__ import annotations

import contextlib
import time
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


def streaming_local_siblings(
    record: WorkspaceRecord, *, max_age_s: float = 0.0
) -> list[WorkspaceRecord]:
    """Other workspaces running in the project directory itself (local ones) with a turn
    running right now: they edit the very same files as `record`.

    `max_age_s`: a scan of the project that any caller in this process made at most that long
    ago will do. A scan walks every workspace of the project and probes the lock of each local
    one, and every local session of a server checks periodically while it runs tools, so a fleet
    of N local sessions walked N workspaces N times per period; sharing one recent scan leaves one
    walk per period however many sessions ask."""
    return [
        other for other in _streaming_local(record.project_path, max_age_s) if other.id != record.id
    ]


# project path -> (when it was scanned, on the monotonic clock; the local workspaces of the
# project with a turn running then, archived ones left out)
_scans: dict[str, tuple[float, list[WorkspaceRecord]]] = {}
_SCANS_KEPT = 256
_scan_count = 0


def scan_count() -> int:
    """Project scans made so far in this process (tests hold the sharing to it)."""
    return _scan_count


def _streaming_local(project_path: str, max_age_s: float) -> list[WorkspaceRecord]:
    global _scan_count
    now = time.monotonic()
    hit = _scans.get(project_path)
    if hit is not None and max_age_s > 0 and now - hit[0] <= max_age_s:
        return hit[1]
    _scan_count += 1
    found = [
        other
        for other in registry.list_workspaces(project_path)
        if other.archived_at is None
        and checkout_for(other).shares_project_dir
        and is_streaming(other.id)
    ]
    if len(_scans) >= _SCANS_KEPT:
        _scans.clear()
    _scans[project_path] = (now, found)
    return found
