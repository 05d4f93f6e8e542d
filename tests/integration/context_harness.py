"""An AgentSession with a real WorkspaceContext over a temp git repository, talking to the fake
LLM server over HTTP: the production path from AGENTS.md to the request bytes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.contextkit import workspace_context
from tests.support.engine import engine_session
from xum.context.workspace import AgentSelection, WorkspaceContext
from xum.engine.agent import AgentSession, SessionSettings
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest
from xum.tools.base import AskUser

MODELS = {
    "anthropic": ("anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai-responses": ("openai:gpt-6.1-sol", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
}


class ContextHarness:
    def __init__(
        self, server: FakeLLM, repo: Path, *, wire: str = "anthropic", ws_id: str = "ws-ctx"
    ) -> None:
        model, key, url = MODELS[wire]
        self.route = resolve_route(model, env={key: "k", url: server.url}, config={})
        self.server = server
        self.repo = repo
        self.ws_id = ws_id
        self.name = "ctx-ws-ab12"
        self.events: list[dict[str, Any]] = []
        self.clients: list[Any] = []
        self.contexts: list[WorkspaceContext] = []

    def session(
        self,
        agent: str = "exec",
        *,
        ask_user: AskUser | None = None,
        thinking: str = "off",
        **settings: Any,
    ) -> AgentSession:
        client = open_client(self.route.endpoint, retry=RetryPolicy(max_retries=0))
        self.clients.append(client)
        context = workspace_context(self.repo, name=self.name)
        self.contexts.append(context)
        return engine_session(
            self.repo,
            self.route,
            client,
            ws_id=self.ws_id,
            name=self.name,
            runtime=context.facts.runtime,
            settings=SessionSettings(thinking=thinking, **settings),  # type: ignore[arg-type]
            scratch_dir=self.repo.parent / "scratch",
            events=self.events,
            context=context,
            agent=AgentSelection(agent_id=agent),
            ask_user=ask_user,
        )

    @property
    def plan_file(self) -> Path:
        return Path(workspace_context(self.repo, name=self.name).facts.plan_file)

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


def system_of(request: RecordedRequest) -> str:
    body = request.json
    if "system" in body:  # Anthropic
        return "".join(block["text"] for block in body["system"])
    return str(body.get("instructions", ""))


def tools_of(request: RecordedRequest) -> str:
    """The tools exactly as sent (without cache breakpoints, which are not content)."""
    return json.dumps(strip_breakpoints(request.json.get("tools", [])), sort_keys=False)


def strip_breakpoints(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_breakpoints(v) for v in value]
    return value


def texts_of(request: RecordedRequest) -> list[str]:
    """Every text block of every message (Anthropic), in order."""
    out: list[str] = []
    for message in request.json["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
    return out


def description_of(request: RecordedRequest, tool: str) -> str:
    return next(t["description"] for t in request.json["tools"] if t["name"] == tool)


def assert_prefix_chain(requests: list[RecordedRequest]) -> None:
    """Each request's system, tools and messages are a byte prefix of the next one's."""
    bodies = [strip_breakpoints(r.json) for r in requests]
    for before, after in itertools.pairwise(bodies):
        assert json.dumps(after.get("system")) == json.dumps(before.get("system"))
        assert json.dumps(after.get("tools")) == json.dumps(before.get("tools"))
        n = len(before["messages"])
        # The last message of a request may gain blocks (Anthropic merges consecutive user
        # turns), so compare all but the last message exactly and the last by its blocks.
        assert json.dumps(after["messages"][: n - 1]) == json.dumps(before["messages"][: n - 1])
        last_before = before["messages"][n - 1]["content"]
        last_after = after["messages"][n - 1]["content"]
        assert json.dumps(last_after[: len(last_before)]) == json.dumps(last_before)


Responder = Callable[[RecordedRequest], Any]
