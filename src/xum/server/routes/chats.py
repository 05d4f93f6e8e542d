"""Scratch chats (docs/workspaces.md, "Scratch chats"): `POST /api/chats` makes a workspace with
no project, working in a private folder under `$XUM_ROOT/chats`. It is then a workspace like any
other: listed by `GET /api/workspaces` (with `scratch: true`), messaged, archived and deleted
through the workspace routes. The browser creates it when its first message is sent."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from xum.core.errors import XumError
from xum.server.errors import from_xum_error
from xum.server.routes.workspaces import (
    AGENT_PATTERN,
    as_json,
    checked_model,
    checked_thinking,
)
from xum.server.schemas import Workspace
from xum.server.state import get_state

router = APIRouter(prefix="/api/chats", tags=["workspaces"])


class CreateChat(BaseModel):
    title: str | None = Field(default=None, max_length=300)
    model: str | None = Field(default=None, max_length=200)
    thinking: str | None = Field(default=None, max_length=20)
    agent: str | None = Field(default=None, pattern=AGENT_PATTERN)


@router.post("", response_model=Workspace, status_code=201)
async def create_chat(body: CreateChat, request: Request) -> Workspace:
    state = get_state(request)
    model = checked_model(body.model)
    thinking = checked_thinking(body.thinking, model)
    try:
        record = await state.hosts.create_scratch(
            title=(body.title or "").strip(),
            model=model,
            thinking=thinking,
            agent=body.agent or "exec",
        )
    except XumError as exc:
        raise from_xum_error(exc) from None
    state.hub.workspaces_changed()
    return as_json(state, record)
