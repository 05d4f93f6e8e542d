"""The providers' own web search over real HTTP: the request carries the provider's tool, the
reply's search and citations are kept in the assistant message, and the next request sends
them back the way the wire needs (Anthropic: the blocks unchanged; Responses: not at all)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.fixtures import ANTHROPIC_SSE
from tests.support.llm_wires import collect, make_client, make_request
from xum.llm.types import Finish, Message, StreamEvent, TextDelta, ToolCallStart, Wire, text_message
from xum.llm.websearch import NativeSearch
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)

HITS = [("Paris forecast", "https://weather.example/paris"), ("Météo", "https://meteo.example/")]
SEARCH = NativeSearch(max_uses=3, allowed_domains=("weather.example",))


async def ask(
    server: FakeLLM, wire: Wire, messages: list[Message] | None = None
) -> list[StreamEvent]:
    client = make_client(server, wire)
    try:
        return await collect(
            client, make_request(wire, messages, thinking="off", web_search=SEARCH)
        )
    finally:
        await client.aclose()


def finish_of(events: list[StreamEvent]) -> Finish:
    finish = events[-1]
    assert isinstance(finish, Finish)
    return finish


async def test_anthropic_request_reply_and_replay(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.web_search_reply("weather in Paris", HITS, "It is sunny.", wire="anthropic")
    )
    events = await ask(fake_llm, "anthropic")
    body = orjson.loads(fake_llm.requests[0].body)
    # The server tool goes after the function tools, with the configured limits.
    assert body["tools"][-1] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 3,
        "allowed_domains": ["weather.example"],
        "cache_control": {"type": "ephemeral"},
    }
    assert body["tools"][0]["name"] == "bash"
    assert not [e for e in events if isinstance(e, ToolCallStart)]  # nothing for xum to run
    finish = finish_of(events)
    assert (
        finish.reason == "stop"
        and "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is sunny."
    )
    search, text = finish.message["content"]
    assert search["type"] == "web_search" and search["query"] == "weather in Paris"
    assert search["results"] == [{"title": t, "url": u} for t, u in HITS]
    assert text["type"] == "text" and text["text"] == "It is sunny."
    assert text["state"]["citations"][0]["url"] == "https://weather.example/paris"

    # The next request resends the provider's blocks exactly as they came.
    recorded = _recorded_blocks(fakellm.web_search_reply("weather in Paris", HITS, "It is sunny."))
    fake_llm.script(fakellm.text("ok"))
    history = [text_message("user", "weather?"), finish.message, text_message("user", "thanks")]
    await ask(fake_llm, "anthropic", history)
    sent = orjson.loads(fake_llm.requests[1].body)["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["server_tool_use", "web_search_tool_result", "text"]
    assert sent[0] == recorded["use"]
    assert sent[1] == recorded["result"]  # encrypted content included, unchanged
    assert sent[2]["citations"] == recorded["citations"]


def _recorded_blocks(reply: fakellm.Reply) -> dict[str, Any]:
    """The blocks the scripted stream carried, put together the way the provider means them."""
    assert reply.replay is not None
    use: dict[str, Any] = {}
    raw_input = ""
    out: dict[str, Any] = {"citations": []}
    for chunk in reply.replay.data.split(b"\n\n"):
        if not chunk.strip():
            continue
        data = orjson.loads(chunk.split(b"data: ", 1)[1])
        if data["type"] == "content_block_start":
            block = data["content_block"]
            if block["type"] == "server_tool_use":
                use = dict(block)
            elif block["type"] == "web_search_tool_result":
                out["result"] = block
        elif data["type"] == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "input_json_delta" and data["index"] == 0:
                raw_input += delta["partial_json"]
            elif delta["type"] == "citations_delta":
                out["citations"].append(delta["citation"])
    out["use"] = {**use, "input": orjson.loads(raw_input)}
    return out


async def test_anthropic_search_error_is_kept(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.web_search_reply(
            "q", [], "I could not search.", wire="anthropic", error_code="max_uses_exceeded"
        )
    )
    search = finish_of(await ask(fake_llm, "anthropic")).message["content"][0]
    assert search["type"] == "web_search" and search["error"] == "max_uses_exceeded"
    assert search["results"] == []


async def test_the_recorded_server_tool_block_streams_from_the_fake_server(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script(fakellm.replay(ANTHROPIC_SSE / "server_tool_use_response.txt"))
    finish = finish_of(await ask(fake_llm, "anthropic"))
    text, search = finish.message["content"]
    assert text["text"] == "Let me search for that."
    assert search["type"] == "web_search" and search["query"] == "weather in Paris"
    assert search["state"]["use"] == {
        "type": "server_tool_use",
        "id": "srvtoolu_01WebSearch",
        "name": "web_search",
        "input": {"query": "weather in Paris"},
    }


async def test_responses_request_reply_and_no_replay_of_the_call(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.web_search_reply("weather in Paris", HITS, "It is sunny.", wire="openai-responses")
    )
    events = await ask(fake_llm, "openai-responses")
    body = orjson.loads(fake_llm.requests[0].body)
    assert body["tools"][-1] == {
        "type": "web_search",
        "filters": {"allowed_domains": ["weather.example"]},
    }
    assert "web_search_call.action.sources" in body["include"]
    finish = finish_of(events)
    search, text = finish.message["content"]
    assert search["type"] == "web_search" and search["query"] == "weather in Paris"
    assert [h["url"] for h in search["results"]] == [u for _, u in HITS]
    assert text["text"] == "It is sunny."
    assert text["state"]["citations"] == [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": len("It is sunny."),
            "url": "https://weather.example/paris",
            "title": "Paris forecast",
        }
    ]
    fake_llm.script(fakellm.text("ok"))
    history = [text_message("user", "weather?"), finish.message, text_message("user", "thanks")]
    await ask(fake_llm, "openai-responses", history)
    sent = orjson.loads(fake_llm.requests[1].body)["input"]
    # With `store: false` nothing can reference the search call: only the answer goes back.
    assert [i["type"] for i in sent] == ["message", "message", "message"]
    assert sent[1]["content"] == [{"type": "output_text", "text": "It is sunny."}]


async def test_no_search_no_provider_tool(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("hi"))
    client = make_client(fake_llm, "anthropic")
    try:
        await collect(client, make_request("anthropic", thinking="off"))
    finally:
        await client.aclose()
    body = orjson.loads(fake_llm.requests[0].body)
    assert [t.get("type") for t in body["tools"]] == [None]
