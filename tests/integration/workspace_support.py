"""A workspace session opened through the one assembly (`open_workspace_session`) against the
fake LLM server, for the integration tests that drive a real workspace's turns."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.assembly import WorkspaceSession, open_workspace_session

MODEL = "anthropic:claude-sonnet-5-5"


@asynccontextmanager
async def fake_llm_session(
    repo: Path, fake_llm: FakeLLM, name_hint: str
) -> AsyncIterator[tuple[WorkspaceSession, list[dict[str, Any]]]]:
    """A new local workspace of `repo` opened on MODEL served by `fake_llm` (no retries), and the
    list its events (as front-ends receive them) are appended to; closed after."""
    created = await lifecycle.create_workspace(repo, "local", name_hint=name_hint, run_init=False)
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route(MODEL, env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    events: list[dict[str, Any]] = []
    session = await open_workspace_session(
        created.record,
        route=route,
        thinking="off",
        emit=lambda event: events.append(event.to_dict()),
        created=created,
        client=client,
    )
    try:
        yield session, events
    finally:
        await session.aclose()
        await client.aclose()
