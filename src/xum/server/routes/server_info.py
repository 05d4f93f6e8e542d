"""What the UI needs to know about the server itself."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request
from pydantic import BaseModel

from xum.core.paths import xum_root
from xum.core.version import version_string
from xum.server.state import get_state

router = APIRouter(prefix="/api/server", tags=["server"])


class ServerInfo(BaseModel):
    version: str
    authRequired: bool
    sshHost: str | None
    root: str
    pid: int


@router.get("/info", response_model=ServerInfo)
async def info(request: Request) -> ServerInfo:
    state = get_state(request)
    return ServerInfo(
        version=version_string(),
        authRequired=state.token is not None,
        sshHost=state.config.ssh_host,
        root=str(xum_root()),
        pid=os.getpid(),
    )
