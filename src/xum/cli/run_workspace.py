"""`xum run --workspace <id|name|last>`: which existing workspace a run continues.

`last` is the project's newest workspace (by creation; sub-agents' workspaces and archived ones
are not candidates); a name is looked up in the project (`--dir`), an id anywhere. The workspace
must be free: a workspace whose session another process (a run, the server's turn) is writing is
refused with the holder named. The lock is taken for real when the session opens, so a run that
loses a race is refused there, just as clearly.
"""

from __future__ import annotations

from pathlib import Path

from xum.core.errors import UsageError, XumError
from xum.store import registry
from xum.store import sessions as session_files
from xum.store.registry import WorkspaceRecord


class WorkspaceBusy(XumError):
    code = "session_busy"


def resolve_workspace(ident: str, directory: Path) -> WorkspaceRecord:
    from xum.workspaces.checkouts.shared import project_root

    project = str(project_root(directory.resolve()))
    record = _find(ident, project)
    if record.archived_at is not None:
        raise UsageError(
            f"workspace {record.name} ({record.id}) is archived",
            hint="unarchive it in the browser UI first, or start a new run without --workspace",
        )
    holder = session_files.lock_holder(record.id)
    if holder is not None:
        who = holder.get("purpose") or "another process"
        pid = holder.get("pid")
        raise WorkspaceBusy(
            f"workspace {record.name} ({record.id}) is busy: {who}"
            + (f" (pid {pid})" if pid else "")
            + " is using its session",
            hint="wait for it to finish (or stop it), then run again",
        )
    return record


def _find(ident: str, project: str) -> WorkspaceRecord:
    here = [r for r in registry.list_workspaces(project) if r.parent_id is None]
    if ident == "last":
        candidates = [r for r in here if r.archived_at is None]
        if not candidates:
            raise UsageError(
                f"no workspace in {project} to continue",
                hint='start one with xum run "..." (without --workspace)',
            )
        return max(candidates, key=lambda r: r.created_at)
    for record in here:
        if record.name == ident:
            return record
    found = registry.get_workspace(ident)
    if found is not None:
        return found
    raise UsageError(
        f"no workspace '{ident}' in {project}",
        hint="`xum sessions` lists this project's workspaces (ids and names); "
        "--workspace last continues the newest",
    )
