"""Replies real OpenAI-compatible servers send that the generated fake streams never do: the fake
server replays each one byte for byte over HTTP and the production client reads it.

Parallel tool calls all numbered 0, a tool name in a later delta than its id, no usage at all,
and HTTP 200 answers that are not a reply (an HTML page, an empty body)."""

from __future__ import annotations

import orjson
import pytest

from tests.support.llm_wires import Sleeps, collect, make_client, make_request
from xum.llm.errors import LLMError
from xum.llm.types import Finish, StreamEvent, ToolCallDelta, ToolCallStart, Wire
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)


def chat_stream(*chunks: object, done: bool = True) -> bytes:
    frames = [b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks]
    if done:
        frames.append(b"data: [DONE]\n\n")
    return b"".join(frames)


def delta(tool_calls: list[dict[str, object]] | None = None, **extra: object) -> dict[str, object]:
    d: dict[str, object] = dict(extra)
    if tool_calls is not None:
        d["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}


def finished(reason: str = "tool_calls", usage: object = None) -> dict[str, object]:
    out: dict[str, object] = {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


async def replay(
    server: FakeLLM, wire: Wire, data: bytes, content_type: str = "text/event-stream"
) -> list[StreamEvent]:
    server.script(fakellm.Reply(replay=fakellm.Replay(data, content_type=content_type)))
    client = make_client(server, wire, Sleeps())
    try:
        return await collect(client, make_request(wire, thinking="off"))
    finally:
        await client.aclose()


def calls_of(finish: StreamEvent) -> list[tuple[str, str, object]]:
    assert isinstance(finish, Finish)
    return [
        (p["id"], p["name"], orjson.loads(p["arguments"]))
        for p in finish.message["content"]
        if p["type"] == "tool_call"
    ]


async def test_parallel_calls_all_at_index_0_stay_two_calls(fake_llm: FakeLLM) -> None:
    def call(call_id: str | None, name: str | None, args: str) -> dict[str, object]:
        fn: dict[str, object] = {"arguments": args}
        if name:
            fn["name"] = name
        out: dict[str, object] = {"index": 0, "type": "function", "function": fn}
        if call_id:
            out["id"] = call_id
        return out

    data = chat_stream(
        delta([call("call_a", "bash", '{"script":')]),
        delta([call(None, None, ' "ls"}')]),
        delta([call("call_b", "file_read", '{"path": "README.md"}')]),
        finished(usage={"prompt_tokens": 10, "completion_tokens": 5}),
    )
    events = await replay(fake_llm, "openai-chat", data)
    assert calls_of(events[-1]) == [
        ("call_a", "bash", {"script": "ls"}),
        ("call_b", "file_read", {"path": "README.md"}),
    ]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [
        (0, "call_a", "bash"),
        (1, "call_b", "file_read"),
    ]


async def test_a_name_in_a_later_delta_than_the_id_is_kept(fake_llm: FakeLLM) -> None:
    data = chat_stream(
        delta([{"index": 0, "id": "call_x", "type": "function", "function": {"arguments": ""}}]),
        delta([{"index": 0, "function": {"arguments": '{"script": '}}]),
        delta([{"index": 0, "function": {"name": "bash"}}]),
        delta([{"index": 0, "function": {"arguments": '"true"}'}}]),
        finished(usage={"prompt_tokens": 10, "completion_tokens": 5}),
    )
    events = await replay(fake_llm, "openai-chat", data)
    assert calls_of(events[-1]) == [("call_x", "bash", {"script": "true"})]
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.id, start.name) == ("call_x", "bash")
    # The arguments that came before the name are passed on once the call has started.
    streamed = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert orjson.loads(streamed) == {"script": "true"}
    assert events.index(start) < min(
        i for i, e in enumerate(events) if isinstance(e, ToolCallDelta)
    )


async def test_a_call_that_never_gets_a_name_is_an_error(fake_llm: FakeLLM) -> None:
    data = chat_stream(
        delta([{"index": 0, "id": "call_x", "function": {"arguments": "{}"}}]),
        finished(),
    )
    with pytest.raises(LLMError) as info:
        await replay(fake_llm, "openai-chat", data)
    assert info.value.kind == "invalid_response"
    assert "tool call call_x arrived without a name" in info.value.message


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic"])
async def test_usage_is_reported_only_when_the_server_counts_tokens(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    fake_llm.script(fakellm.text("counted"))
    client = make_client(fake_llm, wire, Sleeps())
    try:
        counted = (await collect(client, make_request(wire, thinking="off")))[-1]
    finally:
        await client.aclose()
    assert isinstance(counted, Finish) and counted.usage_reported


async def test_a_chat_reply_without_usage_is_unmeasured(fake_llm: FakeLLM) -> None:
    for usage in (None, {}, {"total_tokens": 12}):
        data = chat_stream(delta(content="hi"), finished("stop", usage=usage))
        finish = (await replay(fake_llm, "openai-chat", data))[-1]
        assert isinstance(finish, Finish) and not finish.usage_reported, usage


async def test_a_responses_reply_without_usage_is_unmeasured(fake_llm: FakeLLM) -> None:
    done = {
        "type": "response.completed",
        "response": {"id": "resp_1", "status": "completed", "output": []},
    }
    item = {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
    }
    data = b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"  # type: ignore[attr-defined]
        for e in (item, done)
    )
    finish = (await replay(fake_llm, "openai-responses", data))[-1]
    assert isinstance(finish, Finish) and not finish.usage_reported


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic"])
async def test_an_html_page_with_status_200_is_named_and_not_retried(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    page = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>...</body></html>"
    with pytest.raises(LLMError) as info:
        await replay(fake_llm, wire, page, content_type="text/html; charset=utf-8")
    err = info.value
    assert err.kind == "invalid_response" and not err.retryable and err.attempts == 1
    assert "answered HTTP 200 (text/html)" in err.message
    assert "<!DOCTYPE html> <html><head><title>Sign in" in err.message
    assert "baseUrl" in (err.hint or "")
    assert len(fake_llm.requests) == 1  # not retried: the same URL gives the same page


async def test_an_empty_200_is_named_and_not_retried(fake_llm: FakeLLM) -> None:
    with pytest.raises(LLMError) as info:
        await replay(fake_llm, "openai-chat", b"")
    assert "answered HTTP 200 (text/event-stream) with an empty body" in info.value.message
    assert len(fake_llm.requests) == 1


async def test_an_event_stream_of_html_is_named(fake_llm: FakeLLM) -> None:
    with pytest.raises(LLMError) as info:
        await replay(fake_llm, "openai-chat", b"<html>\n<body>gateway</body>\n</html>\n")
    assert "a body that is not an event stream, beginning '<html>" in info.value.message
    assert len(fake_llm.requests) == 1


async def test_an_event_stream_under_another_content_type_is_still_read(
    fake_llm: FakeLLM,
) -> None:
    data = chat_stream(delta(content="plain but fine"), finished("stop"))
    events = await replay(fake_llm, "openai-chat", data, content_type="text/plain")
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.message["content"][0]["text"] == "plain but fine"
