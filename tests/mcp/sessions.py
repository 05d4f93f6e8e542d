"""Workspace sessions for the MCP tests: one opened (and reopened) through the assembly on the
fake LLM, with a chosen permission mode and approver, its events collected as dicts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.store.registry import WorkspaceRecord
from xum.testing.fakellm import FakeLLM
from xum.workspaces.assembly import WorkspaceSession, open_workspace_session
from xum.workspaces.lifecycle import CreatedWorkspace
from xum.workspaces.safety.approvals import Approver
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice

MODEL = "anthropic:claude-sonnet-5-5"


@asynccontextmanager
async def open_session(
    record: WorkspaceRecord,
    fake_llm: FakeLLM,
    events: list[dict[str, Any]],
    *,
    created: CreatedWorkspace | None = None,
    safety: SafetyChoice = DEFAULT_CHOICE,
    approver: Approver | None = None,
) -> AsyncIterator[WorkspaceSession]:
    """`record`'s session on MODEL served by `fake_llm` (no retries); closed after."""
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route(MODEL, env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    session = await open_workspace_session(
        record,
        route=route,
        thinking="off",
        emit=lambda event: events.append(event.to_dict()),
        created=created,
        client=client,
        safety=safety,
        approver=approver,
    )
    try:
        yield session
    finally:
        await session.aclose()
        await client.aclose()
