"""Replies real OpenAI-compatible servers send that the generated fake streams never do: the fake
server replays each one byte for byte over HTTP and the production client reads it.

HTTP 200 answers that are not a reply (an HTML page, an empty body)."""

from __future__ import annotations

import orjson
import pytest

from tests.integration.test_llm_wires import Sleeps, collect, make_client, make_request
from xum.llm.errors import LLMError
from xum.llm.types import Finish, StreamEvent, Wire
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
