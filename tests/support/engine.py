"""Engine-level sessions for the tests that sit below the workspace assembly.

`engine_session` is the one place a test builds an `AgentSession` by hand (the engine's
constructor has many parameters; the harnesses pass only what they change). Tests that want a
session as the product opens it use `xum.testing.opening.open_session` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
from xum.engine.derive import replay_events
from xum.engine.events import EventSink, null_sink
from xum.engine.extensions import ToolMiddleware
from xum.engine.route import ModelRoute
from xum.llm.client import LLMClient, open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.base import Runtime
from xum.runtime.local import LocalRuntime
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import fake_route

TOOLS = ["bash", "file_read", "file_edit_replace_string", "todo_write", "todo_read", "web_fetch"]


def as_dicts(sink: Callable[[dict[str, Any]], None]) -> EventSink:
    """An engine event sink that hands `sink` each event as the JSON object clients get."""
    return lambda event: sink(event.to_dict())


def no_retry_client(route: ModelRoute) -> LLMClient:
    """A client for `route` that does not retry (a test's failures show at once)."""
    return open_client(route.endpoint, retry=RetryPolicy(max_retries=0))


def engine_session(
    workdir: Path,
    route: ModelRoute,
    client: LLMClient,
    *,
    ws_id: str = "ws-test",
    name: str = "test-ws",
    log: SessionLog | None = None,
    runtime: Runtime | None = None,
    settings: SessionSettings | None = None,
    scratch_dir: Path | None = None,
    events: list[dict[str, Any]] | None = None,
    emit: EventSink | None = None,
    middleware: Sequence[ToolMiddleware] = (),
    **parts: Any,
) -> AgentSession:
    """An `AgentSession` in `workdir` (a local runtime) over the log of `ws_id`, with a test
    system prompt and no tools unless `settings` says otherwise. Events go to `emit`, or to
    `events` as the JSON objects clients get. `parts`: the engine's optional collaborators
    (context, agent, ask_user, subagents, ...), passed through."""
    if emit is None:
        emit = as_dicts(events.append) if events is not None else null_sink
    return AgentSession(
        workspace=WorkspaceInfo(ws_id, name, str(workdir), str(workdir), "local"),
        log=log if log is not None else SessionLog.open(ws_id),
        runtime=runtime if runtime is not None else LocalRuntime(str(workdir), str(workdir)),
        route=route,
        client=client,
        settings=settings or SessionSettings(system_prompt="You are a test.", tools=[]),
        scratch_dir=scratch_dir if scratch_dir is not None else workdir / ".scratch",
        emit=emit,
        middleware=middleware,
        **parts,
    )


class Harness:
    """Sessions over one workspace's log in `workdir`, all talking to the fake LLM."""

    def __init__(self, server: FakeLLM, workdir: Path, ws_id: str = "ws-test") -> None:
        self.route = fake_route(server)
        self.workdir = workdir
        self.ws_id = ws_id
        self.events: list[dict[str, Any]] = []
        self.clients: list[LLMClient] = []

    def session(
        self,
        *,
        middleware: Sequence[ToolMiddleware] = (),
        emit: Callable[[dict[str, Any]], None] | None = None,
        **settings: Any,
    ) -> AgentSession:
        """A new engine object over the harness's log (a second call is a reopen)."""
        client = no_retry_client(self.route)
        self.clients.append(client)
        return engine_session(
            self.workdir,
            self.route,
            client,
            ws_id=self.ws_id,
            settings=SessionSettings(system_prompt="You are a test.", tools=TOOLS, **settings),
            emit=as_dicts(emit or self.events.append),
            middleware=middleware,
        )

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


def valid_history(ws_id: str) -> list[Any]:
    """The provider history from a fresh read of the log; asserts every call has its result."""
    messages = rebuild_history(SessionLog.open(ws_id).frames)
    pending: set[str] = set()
    for message in messages:
        for part in message["content"]:
            if part["type"] == "tool_call":
                pending.add(part["id"])
            elif part["type"] == "tool_result":
                pending.discard(part["call_id"])
    assert not pending
    return messages


def assert_valid_log(ws_id: str) -> None:
    """The log reopens, its seqs are contiguous, its events derive, and the history it makes has
    every call answered (a provider would accept it)."""
    log = SessionLog.open(ws_id)
    seqs = [f.seq for f in log.frames]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    assert not [f for f in log.frames if f.damaged]
    list(replay_events(log.frames))
    valid_history(ws_id)  # every call answered


def unmeasured(*blocks: dict[str, object], stop: str = "end_turn") -> fakellm.Reply:
    """An Anthropic stream with no `usage` anywhere (some compatible servers send none)."""
    events: list[dict[str, object]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        }
    ]
    for index, block in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop}})
    events.append({"type": "message_stop"})
    data = b"".join(
        b"event: " + str(e["type"]).encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
        for e in events
    )
    return fakellm.Reply(replay=fakellm.Replay(data))
