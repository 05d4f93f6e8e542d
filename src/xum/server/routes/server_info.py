"""What the UI needs to know about the server itself."""

from __future__ import annotations

import asyncio
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


class ContainerEngine(BaseModel):
    """Whether the Docker runtime can be offered: `available` when the container CLI xum would
    use (`cli`: docker or podman) reaches its engine (`version`); else `problem` says why."""

    available: bool
    cli: str | None
    version: str | None
    problem: str | None


@router.get("/container-engine", response_model=ContainerEngine)
async def container_engine() -> ContainerEngine:
    from xum.runtime.container_engine import probe_engine

    # The CLI may be slow to answer (a remote engine over ssh): off the event loop.
    found = await asyncio.to_thread(probe_engine)
    return ContainerEngine(
        available=found.available, cli=found.cli, version=found.version, problem=found.problem
    )
