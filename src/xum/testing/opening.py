"""Open a workspace session the way the product does, against the fake LLM, for tests.

    async with open_session(repo, fake_llm, name_hint="demo") as (session, events):
        fake_llm.script(fakellm.text("hi"))
        await session.agent.run_turn("hello")

creates a workspace of `repo` (`xum.workspaces.lifecycle.create_workspace`, its init hook not
run) and opens it through the one assembly every front-end uses
(`xum.workspaces.assembly.open_workspace_session`): the real runtime, context, tools, hooks,
safety and session log, with the model served by `fake_llm`. `events` collects what a front-end
would receive (`to_dict()` of each event). Tests of the engine alone, below the assembly, build
their sessions with tests/support/engine.py instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from xum.engine.route import ModelRoute, resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.llm.types import ThinkingLevel
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.assembly import WorkspaceSession, open_workspace_session

MODEL = "anthropic:claude-sonnet-5-5"

Opened = tuple[WorkspaceSession, list[dict[str, Any]]]


def fake_route(fake: FakeLLM, model: str = MODEL) -> ModelRoute:
    """`model` as served by `fake` (an Anthropic endpoint), without reading any config file."""
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.url}
    return resolve_route(model, env=env, config={})


@asynccontextmanager
async def open_session(
    project: Path,
    fake: FakeLLM,
    *,
    name_hint: str = "test",
    runtime: str = "local",
    model: str = MODEL,
    thinking: ThinkingLevel = "off",
    retries: int = 0,
    **options: Any,
) -> AsyncIterator[Opened]:
    """A new workspace of `project` opened on `model` served by `fake`, and the list its events
    are appended to; closed after. `retries`: the client's retries (none by default, so a
    failure shows at once). `options` go to `open_workspace_session` (goals, safety, ...)."""
    created = await lifecycle.create_workspace(
        project, runtime, name_hint=name_hint, run_init=False
    )
    route = fake_route(fake, model)
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=retries))
    events: list[dict[str, Any]] = []
    try:
        session = await open_workspace_session(
            created.record,
            route=route,
            thinking=thinking,
            emit=lambda event: events.append(event.to_dict()),
            created=created,
            client=client,
            **options,
        )
    except BaseException:
        await client.aclose()
        await created.runtime.close()
        raise
    try:
        yield session, events
    finally:
        await session.aclose()
        await client.aclose()
