"""An MCP server added while a session runs (Settings → MCP writes the config between two
messages) is usable on the very next message, with one recorded prefix break.

A session that began with no MCP server froze a tool list without any MCP tool and without
`tool_catalog_search`: a change row alone could not make the new server reachable. The next
request starts one new segment (`mcp_servers_added`); servers added after that are change rows
again. Real server processes (the SDK-written test server), the fake LLM's recorded requests,
real session logs and a real reopen of the workspace for the resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gitrepo import make_repo
from tests.integration.context_harness import assert_prefix_chain, strip_breakpoints
from tests.mcp.sessions import MODEL, open_session
from tests.mcp.support import server_entry, write_config
from xum.context.frozen import prefix_breaks
from xum.engine.replay import rebuild_requests
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.store import frame_types as ev
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest
from xum.workspaces import lifecycle

Event = dict[str, Any]


def tool_names(request: RecordedRequest) -> list[str]:
    return [t["name"] for t in request.json.get("tools", [])]


def frames_of(record: WorkspaceRecord) -> list[Any]:
    return list(SessionLog.open(record.id).frames)


def segments(record: WorkspaceRecord) -> list[str]:
    return [f.data["reason"] for f in frames_of(record) if f.type == ev.CONTEXT_FROZEN]


def change_rows(record: WorkspaceRecord) -> list[Any]:
    return [
        f
        for f in frames_of(record)
        if f.type == ev.SYNTHETIC_MESSAGE and f.data.get("kind") == "context_update"
    ]


def assert_history_kept(before: RecordedRequest, after: RecordedRequest) -> None:
    """Across the one break only the system prompt and tools change: the conversation of
    `before` is still the start of `after`'s."""
    old = strip_breakpoints(before.json)["messages"]
    new = strip_breakpoints(after.json)["messages"]
    assert json.dumps(new[: len(old) - 1]) == json.dumps(old[:-1])
    last_old, last_new = old[-1]["content"], new[len(old) - 1]["content"]
    assert json.dumps(last_new[: len(last_old)]) == json.dumps(last_old)


def assert_rebuilt_from_log(record: WorkspaceRecord, fake_llm: FakeLLM) -> None:
    """Every request the log records encodes to the bytes the fake server received."""
    rebuilt = rebuild_requests(frames_of(record))
    assert len(rebuilt) == len(fake_llm.requests)
    client = open_client(resolve_route(MODEL, env={"ANTHROPIC_API_KEY": "k"}, config={}).endpoint)
    for recorded, sent in zip(rebuilt, fake_llm.requests, strict=True):
        assert client.request_body(recorded.request) == sent.body, (recorded.turn_id, recorded.step)


async def test_a_server_added_mid_session_is_callable_on_the_next_message(
    fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    created = await lifecycle.create_workspace(repo, "local", name_hint="mcpadd", run_init=False)
    record = created.record
    events: list[Event] = []
    config = xum_root / "mcp.jsonc"
    async with open_session(record, fake_llm, events, created=created) as session:
        fake_llm.script(fakellm.text("one"))
        await session.agent.run_turn("first")
        first = fake_llm.requests[-1]
        assert not [n for n in tool_names(first) if n.startswith("mcp__")]
        assert "tool_catalog_search" not in tool_names(first)

        # What Settings → MCP does: the global file gains a server between two messages.
        write_config(config, {"t": server_entry(tools="echo")}, toolSearch=False)
        fake_llm.script(fakellm.tool_call("mcp__t__echo", {"text": "hi"}), fakellm.text("two"))
        await session.agent.run_turn("second")
        second = fake_llm.requests[1]
        assert "mcp__t__echo" in tool_names(second)
        assert "tool_catalog_search" in tool_names(second)
        assert "<mcp>" in json.dumps(second.json["system"])
        (echo,) = [e for e in events if e["type"] == "tool-result"]
        assert echo["output"] == "hi" and not echo["is_error"]

        # A second server added later is a change row: no further break.
        write_config(
            config,
            {"t": server_entry(tools="echo"), "u": server_entry(tools="whoami")},
            toolSearch=False,
        )
        fake_llm.script(fakellm.text("three"))
        await session.agent.run_turn("third")
        (row,) = change_rows(record)
        text = row.data["message"]["content"][0]["text"]
        assert "mcp__u__whoami" in text and "tool_catalog_search" in text

    assert segments(record) == ["start", "mcp_servers_added"]
    assert [b["reason"] for b in prefix_breaks(frames_of(record))] == ["mcp_servers_added"]
    assert_history_kept(first, second)
    assert_prefix_chain(fake_llm.requests[1:])
    assert_rebuilt_from_log(record, fake_llm)

    # Resume: a new session over the same log sends the recorded segment, byte for byte, and
    # starts no segment of its own.
    async with open_session(record, fake_llm, events) as session:
        fake_llm.script(fakellm.text("four"))
        await session.agent.run_turn("fourth")
    assert segments(record) == ["start", "mcp_servers_added"]
    assert_prefix_chain(fake_llm.requests[1:])
    assert_rebuilt_from_log(record, fake_llm)


async def test_with_tool_search_the_added_server_is_reached_through_the_search(
    fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    created = await lifecycle.create_workspace(repo, "local", name_hint="mcpsearch", run_init=False)
    events: list[Event] = []
    async with open_session(created.record, fake_llm, events, created=created) as session:
        fake_llm.script(fakellm.text("one"))
        await session.agent.run_turn("first")
        write_config(xum_root / "mcp.jsonc", {"t": server_entry(tools="echo")})  # search on
        fake_llm.script(
            fakellm.tool_call("tool_catalog_search", {"query": "echo"}),
            fakellm.tool_call("mcp__t__echo", {"text": "found"}),
            fakellm.text("two"),
        )
        await session.agent.run_turn("second")
    first, second, third, _ = fake_llm.requests
    assert "tool_catalog_search" not in tool_names(first)
    assert "tool_catalog_search" in tool_names(second)
    assert "mcp__t__echo" not in tool_names(second)
    assert "mcp__t__echo" in tool_names(third)
    search, echo = [e for e in events if e["type"] == "tool-result"]
    assert "mcp__t__echo" in search["output"] and not search["is_error"]
    assert echo["output"] == "found" and not echo["is_error"]
    # The added server's break, then the search's load (its own, documented break).
    assert segments(created.record) == ["start", "mcp_servers_added", "mcp_tools_loaded"]
    assert_history_kept(first, second)
    assert_rebuilt_from_log(created.record, fake_llm)
