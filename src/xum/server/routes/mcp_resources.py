"""A workspace's MCP resources, for the composer's `@server:uri` suggestions.

`GET /api/workspaces/{id}/mcp/resources?q=` opens the workspace's session if it is not open
(its servers start as for a first message), asks every server for its resources and returns
those whose `server:uri`, name or description contains `q` (case-insensitive), at most
`MAX_MATCHES`, with a line per server that could not list them. Sending a message that mentions
`@server:uri` attaches the resource (`xum.engine.resource_mentions`); this route only suggests.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from xum.server.hosting import workspace_or_404
from xum.server.state import get_state

router = APIRouter(tags=["mcp"])

MAX_MATCHES = 50


class ResourceRow(BaseModel):
    server: str
    uri: str
    mention: str  # `server:uri`, what follows the `@` in a message
    name: str
    description: str
    mimeType: str | None = None
    size: int | None = None


class ResourceList(BaseModel):
    resources: list[ResourceRow]
    errors: list[str]
    truncated: bool


@router.get("/api/workspaces/{workspace_id}/mcp/resources", response_model=ResourceList)
async def list_resources(
    workspace_id: str, request: Request, q: str = Query(default="", max_length=500)
) -> ResourceList:
    record = workspace_or_404(workspace_id)
    host = await get_state(request).hosts.open(record)
    manager = host.parts.mcp if host.parts is not None else None
    if manager is None:
        return ResourceList(resources=[], errors=[], truncated=False)
    found = await manager.list_resources()
    needle = q.strip().lower()
    rows = [
        ResourceRow(
            server=r.server,
            uri=r.uri,
            mention=r.mention,
            name=r.name,
            description=r.description,
            mimeType=r.mime_type,
            size=r.size,
        )
        for r in found.resources
        if not needle or needle in f"{r.mention}\n{r.name}\n{r.description}".lower()
    ]
    return ResourceList(
        resources=rows[:MAX_MATCHES], errors=list(found.errors), truncated=len(rows) > MAX_MATCHES
    )
