"""Idle compaction: the periodic check for workspaces left alone longer than their project's
`/idle <hours>` (docs/compaction.md), run by a long-lived host registry (the server's).

About once an hour (`Hosts.idle_check_s`; the server's `idle_check_s`) every workspace of a project with idle
compaction on is looked at; one is compacted when its last activity (the newest frame of its
log) is older than the setting, no turn runs in it (here or in another process), and the model
sees more than a summary. The compaction is an ordinary compaction turn with trigger `idle`,
driven by the workspace's host like any turn, so the browser sees it live. Once it is done the
workspace's record notes the log's last seq (`idleCompactedSeq`): while nothing follows, the UI
shows the idle-compacted badge.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from xum.core.clock import now_ms
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store import registry
from xum.store import sessions as session_files
from xum.store.frames import Frame
from xum.store.projection import rebuild_history
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog


class IdleCompactor(Protocol):
    """What the sweep needs of the process's hosts (`xum.host.hosts.Hosts`), named here so that
    this module does not import the registry that imports it."""

    def is_running(self, workspace_id: str) -> bool: ...

    async def start_idle_compaction(self, record: WorkspaceRecord) -> bool: ...


log = logging.getLogger("xum.host")

IDLE_SEQ_KEY = "idle_compacted_seq"  # `idleCompactedSeq` in config.json


def eligible(frames: Sequence[Frame], hours: float, now: int) -> bool:
    """Idle for `hours`, and compacting would replace something (the model sees more than a
    summary)."""
    if not frames or frames[-1].ts > now - int(hours * 3_600_000):
        return False
    history = rebuild_history(frames)
    if not history:
        return False
    if len(history) > 1:
        return True
    newest = next((f.type for f in reversed(frames) if f.type in ev.BOUNDARY_TYPES), None)
    return newest != ev.COMPACTION


def _candidates(manager: IdleCompactor, now: int) -> list[WorkspaceRecord]:
    """Worker thread: the workspaces due for an idle compaction (reads config and logs)."""
    out: list[WorkspaceRecord] = []
    for record in registry.list_workspaces():
        if record.archived_at is not None or record.parent_id is not None:
            continue  # sub-agents' workspaces end with their task
        hours = cc.idle_hours(record.project_path)
        if hours is None or manager.is_running(record.id) or session_files.is_busy(record.id):
            continue
        if not session_files.has_log(record.id):
            continue
        frames = SessionLog.open(record.id, purpose="xum idle check").frames
        if eligible(frames, hours, now):
            out.append(record)
    return out


async def compact_idle(manager: IdleCompactor, now: int | None = None) -> list[str]:
    """Start an idle compaction in every workspace due for one; returns their ids."""
    due = await asyncio.to_thread(_candidates, manager, now_ms() if now is None else now)
    started: list[str] = []
    for record in due:
        try:
            if await manager.start_idle_compaction(record):
                started.append(record.id)
        except Exception:  # one workspace's problem must not stop the others
            log.exception("idle compaction could not start in workspace %s", record.id)
    return started


def note_compacted(workspace_id: str, last_seq: int) -> None:
    """Record that the idle compaction ended at `last_seq` (for the badge)."""
    record = registry.get_workspace(workspace_id)
    if record is not None:
        registry.update_workspace(workspace_id, extra={**record.extra, IDLE_SEQ_KEY: last_seq})
