"""MCP resources: the `mcp_resource_read` tool (list, read, bounded, binary saved, masked) and
`@server:uri` mentions attached to a message, against a real SDK server offering resources
(tests/mcp/resource_server.py), in a session opened through the one assembly with the fake LLM;
and the composer's suggestion route through the real server app."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.server_support import AUTH, create_workspace, server_client, use_fake_llm
from tests.mcp import resource_server
from tests.mcp.support import write_config
from tests.support.hooks import make_project
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session
from xum.workspaces.assembly import WorkspaceSession

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")

SECRET = "sk-resource-93b1e0aa4c"
COMMAND = f"{sys.executable} {Path(resource_server.__file__)}"

Event = dict[str, Any]


@pytest.fixture
async def opened(
    repo: Path, fake_llm: FakeLLM, xum_root: Path
) -> AsyncIterator[tuple[WorkspaceSession, list[Event]]]:
    set_project_secret(str(repo), "TEST_SECRET", SECRET)
    write_config(xum_root / "mcp.jsonc", {"r": COMMAND})
    async with open_session(repo, fake_llm, name_hint="res") as pair:
        yield pair


def results(events: list[Event]) -> list[Event]:
    return [e for e in events if e["type"] == "tool-result"]


def user_text(request: Any) -> str:
    """The text of the last user message the model received."""
    messages = request.json["messages"]
    last = next(m for m in reversed(messages) if m["role"] == "user")
    content = last["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


async def test_the_tool_lists_and_reads_resources(
    opened: tuple[WorkspaceSession, list[Event]], fake_llm: FakeLLM
) -> None:
    session, events = opened
    fake_llm.script(
        fakellm.tool_call("mcp_resource_read", {}),
        fakellm.tool_call("mcp_resource_read", {"uri": "notes://readme"}),
        fakellm.tool_call("mcp_resource_read", {"server": "r", "uri": "notes://big"}),
        fakellm.tool_call("mcp_resource_read", {"uri": "blob://pixel"}),
        fakellm.tool_call("mcp_resource_read", {"server": "r", "uri": "notes://secret"}),
        fakellm.tool_call("mcp_resource_read", {"server": "nope", "uri": "notes://readme"}),
        fakellm.text("read"),
    )
    await session.agent.run_turn("read the notes")
    listed, readme, big, pixel, secret, unknown = results(events)
    assert "r:notes://readme (readme, text/markdown)" in listed["output"]
    assert "r:blob://pixel" in listed["output"] and not listed["is_error"]
    assert resource_server.RESOURCE_MARK in readme["output"] and not readme["is_error"]
    assert readme["meta"]["mcp_resource"] == "notes://readme"
    assert "bytes omitted" in big["output"] and "line 19999" in big["output"]
    assert Path(big["meta"]["spill_path"]).read_text().count("\n") >= 19999
    saved = Path(pixel["meta"]["files"][0]["path"])
    assert saved.read_bytes().startswith(b"\x89PNG")
    assert SECRET not in secret["output"] and "[secret:TEST_SECRET]" in secret["output"]
    assert unknown["is_error"] and "no MCP server named 'nope'" in unknown["output"]


async def test_mentions_attach_resources_to_the_message(
    opened: tuple[WorkspaceSession, list[Event]], fake_llm: FakeLLM
) -> None:
    session, events = opened
    fake_llm.script(fakellm.text("seen"))
    typed = (
        "compare @r:notes://readme, @r:notes://big and @r:notes://missing; "
        "mail me@r:notes://readme or @other:notes://readme"
    )
    await session.agent.run_turn(typed)
    sent = user_text(fake_llm.requests[-1])
    assert sent.startswith(typed + "\n\n")
    assert sent.count("<mcp-resource ") == 3  # the address and the unknown server are text
    assert '<mcp-resource server="r" uri="notes://readme">' in sent
    assert resource_server.RESOURCE_MARK in sent
    assert "[cut: " in sent and "read the rest with mcp_resource_read" in sent
    assert '<mcp-resource server="r" uri="notes://missing" error="true">' in sent
    (message,) = [e for e in events if e["type"] == "user-message"]
    assert message["typed"] == typed
    assert message["slash"] == {
        "kind": "mcp-resources",
        "resources": [
            {"server": "r", "uri": "notes://readme"},
            {"server": "r", "uri": "notes://big"},
            {"server": "r", "uri": "notes://missing"},
        ],
    }


async def test_a_mentioned_resource_is_masked_and_cannot_close_its_block(
    opened: tuple[WorkspaceSession, list[Event]], fake_llm: FakeLLM
) -> None:
    session, _ = opened
    fake_llm.script(fakellm.text("seen"))
    await session.agent.run_turn("@r:notes://secret @r:notes://sneaky")
    sent = user_text(fake_llm.requests[-1])
    assert SECRET not in sent and "secret=[secret:TEST_SECRET]" in sent
    # The resource's text cannot end its block or open one of xum's tags.
    assert sent.count("</mcp-resource>") == 2
    assert "before &lt;/mcp-resource>" in sent and "&lt;system>obey" in sent


def test_the_composer_route_suggests_resources(
    tmp_path: Path, xum_root: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    project = make_project(tmp_path)
    write_config(xum_root / "mcp.jsonc", {"r": COMMAND})
    with server_client() as client:
        wid = create_workspace(client, project)["id"]
        res = client.get(f"/api/workspaces/{wid}/mcp/resources?q=READ", headers=AUTH)
        assert res.status_code == 200, res.text
        body = res.json()
        assert [r["mention"] for r in body["resources"]] == ["r:notes://readme"]
        assert body["resources"][0]["mimeType"] == "text/markdown"
        assert body["errors"] == [] and body["truncated"] is False
        every = client.get(f"/api/workspaces/{wid}/mcp/resources", headers=AUTH).json()
        assert len(every["resources"]) == 5
        missing = client.get("/api/workspaces/nope/mcp/resources", headers=AUTH)
        assert missing.status_code == 404
