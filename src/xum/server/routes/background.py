"""A workspace's background processes, for the browser's strip (Ctrl+Shift+J): the list (what
runs, since when, its last lines) and stop.

The processes belong to the workspace's open session (xum.host.background); a workspace whose
session is not open has none. A stop is an explicit stop: a monitor on the process wakes nobody.
Changes reach subscribers as `background-processes` events (docs/events.md).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from xum.server.errors import ApiError
from xum.server.hosting import workspace_or_404
from xum.server.state import get_state

router = APIRouter(prefix="/api/workspaces", tags=["background"])


class BackgroundList(BaseModel):
    processes: list[dict[str, Any]]  # rows as in the `background-processes` event, + last_lines


class Stopped(BaseModel):
    process: dict[str, Any]


@router.get("/{workspace_id}/background", response_model=BackgroundList)
async def list_background(workspace_id: str, request: Request) -> BackgroundList:
    state = get_state(request)
    workspace_or_404(workspace_id)
    host = state.hosts.get(workspace_id)
    rows = host.watch.snapshot() if host is not None else []
    return BackgroundList(processes=rows)


@router.post("/{workspace_id}/background/{process_id}/stop", response_model=Stopped)
async def stop_background(workspace_id: str, process_id: str, request: Request) -> Stopped:
    state = get_state(request)
    workspace_or_404(workspace_id)
    host = state.hosts.get(workspace_id)
    row = await host.watch.stop(process_id) if host is not None else None
    if row is None:
        raise ApiError(
            404,
            "not_found",
            f"no background process {process_id!r} in this workspace",
            "GET /api/workspaces/{id}/background lists them",
        )
    return Stopped(process=row)
