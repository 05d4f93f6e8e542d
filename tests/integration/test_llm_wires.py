"""The three wire clients over real HTTP against the fake LLM server.

Nothing here is mocked: requests leave through httpx, the fake server answers with each wire's
real framing (and the recorded Anthropic streams byte for byte), and the client under test is
the production code path. Retries run with an injected policy whose sleep only records.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
import pytest

from tests.fixtures import ANTHROPIC_SSE
from tests.support.llm_wires import KEY, TOOLS, Sleeps, collect, make_client, make_request, texts
from xum.llm.client import LLMClient, open_client
from xum.llm.errors import LLMError
from xum.llm.types import (
    Finish,
    LLMRequest,
    Message,
    ReasoningDelta,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Wire,
    text_message,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

FIXTURES = ANTHROPIC_SSE
WIRES: list[Wire] = ["anthropic", "openai-responses", "openai-chat"]
PATH = {
    "anthropic": "/v1/messages",
    "openai-responses": "/v1/responses",
    "openai-chat": "/v1/chat/completions",
}

pytestmark = pytest.mark.timeout(60)


def after_last_retry(events: list[StreamEvent]) -> list[StreamEvent]:
    idx = max((i for i, e in enumerate(events) if isinstance(e, Retrying)), default=-1)
    return events[idx + 1 :]


@pytest.fixture
async def clients() -> AsyncIterator[list[LLMClient]]:
    opened: list[LLMClient] = []
    yield opened
    for client in opened:
        await client.aclose()


# Happy paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_text_reply_and_request_shape(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.text("Hello from the fake server, in pieces.", chunk_size=5))
    client = make_client(fake_llm, wire)
    request = make_request(wire)
    try:
        events = await collect(client, request)
    finally:
        await client.aclose()
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert texts(events) == "Hello from the fake server, in pieces."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    assert finish.message["content"][-1] == {
        "type": "text",
        "text": "Hello from the fake server, in pieces.",
    }
    (rec,) = fake_llm.requests
    assert rec.path == PATH[wire] and rec.status == 200 and rec.error is None
    assert rec.body == client.request_body(request)  # exactly the bytes we say we send
    if wire == "anthropic":
        assert rec.headers["x-api-key"] == KEY and rec.headers["anthropic-version"] == "2023-06-01"
    else:
        assert rec.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning_is_streamed_and_its_state_replayed(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(
        fakellm.reply(fakellm.Reasoning("Think first."), "Answer."),
        fakellm.text("Second."),
    )
    client = make_client(fake_llm, wire)
    try:
        events = await collect(client, make_request(wire))
        finish = events[-1]
        assert isinstance(finish, Finish)
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Think first."
        reasoning = finish.message["content"][0]
        assert reasoning["type"] == "reasoning" and reasoning.get("wire") == wire
        history = [text_message("user", "hello"), finish.message, text_message("user", "more")]
        await collect(client, make_request(wire, history))
    finally:
        await client.aclose()
    sent = fake_llm.requests[1].json
    state = reasoning.get("state") or {}
    if wire == "anthropic":
        block = sent["messages"][1]["content"][0]
        assert block == {
            "type": "thinking",
            "thinking": "Think first.",
            "signature": state["signature"],
        }
    elif wire == "openai-responses":
        (item,) = [i for i in sent["input"] if i["type"] == "reasoning"]
        assert item["encrypted_content"] == state["encrypted_content"]
        assert item["summary"] == [{"type": "summary_text", "text": "Think first."}]
    else:
        assert sent["messages"][2]["reasoning_content"] == "Think first."
    assert fake_llm.requests[1].error is None


@pytest.mark.parametrize("wire", WIRES)
async def test_tool_calls_with_streamed_arguments(fake_llm: FakeLLM, wire: Wire) -> None:
    args = {"script": "grep -rn 'needle' src/ | head -50"}
    fake_llm.script(
        fakellm.reply(
            "Two calls.",
            fakellm.ToolCall("bash", args, id="call_a"),
            fakellm.ToolCall("bash", "{broken json", id="call_b"),
            chunk_size=4,
        )
    )
    client = make_client(fake_llm, wire)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "bash"), (1, "bash")]
    first_args = [e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == 0]
    assert len(first_args) > 1 and orjson.loads("".join(first_args)) == args
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [ToolCallEnd(0), ToolCallEnd(1)]
    calls = [p for p in finish.message["content"] if p["type"] == "tool_call"]
    assert [c["id"] for c in calls] == ["call_a", "call_b"]
    assert orjson.loads(calls[0]["arguments"]) == args
    assert calls[1]["arguments"] == "{broken json"  # kept raw for the engine to report


@pytest.mark.parametrize("wire", WIRES)
async def test_usage_with_cache_tokens(fake_llm: FakeLLM, wire: Wire) -> None:
    if wire == "anthropic":  # Anthropic's input_tokens excludes the cached part
        usage = fakellm.Usage(
            input_tokens=100, output_tokens=7, cache_read_tokens=900, cache_write_tokens=50
        )
    else:  # OpenAI's includes it
        usage = fakellm.Usage(
            input_tokens=1050, output_tokens=7, cache_read_tokens=900, reasoning_tokens=3
        )
    fake_llm.script(fakellm.text("ok", usage=usage))
    client = make_client(fake_llm, wire)
    try:
        finish = await client.complete(make_request(wire))
    finally:
        await client.aclose()
    assert finish.usage.input_tokens == 1050
    assert finish.usage.cache_read_tokens == 900
    assert finish.usage.output_tokens == 7
    assert finish.usage.cache_write_tokens == (50 if wire == "anthropic" else 0)


@pytest.mark.parametrize("wire", WIRES)
async def test_non_streaming_mode_gives_the_same_result(fake_llm: FakeLLM, wire: Wire) -> None:
    reply = fakellm.reply(
        fakellm.Reasoning("hmm"), "Done.", fakellm.ToolCall("bash", {"script": "ls"}, id="c1")
    )
    fake_llm.script(reply, reply)
    client = make_client(fake_llm, wire)
    try:
        streamed = await collect(client, make_request(wire))
        whole = await collect(client, make_request(wire), stream=False)
    finally:
        await client.aclose()
    assert fake_llm.requests[1].stream is False
    a, b = streamed[-1], whole[-1]
    assert isinstance(a, Finish) and isinstance(b, Finish)
    assert (a.reason, texts(streamed)) == (b.reason, texts(whole)) == ("tool_calls", "Done.")
    strip = [{k: v for k, v in p.items() if k != "state"} for p in b.message["content"]]
    assert strip == [{k: v for k, v in p.items() if k != "state"} for p in a.message["content"]]


# Prompt caching and byte stability -----------------------------------------------------------


async def test_anthropic_breakpoints_give_cache_hits_on_the_next_turn(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("first"), fakellm.text("second"))
    client = make_client(fake_llm, "anthropic")
    long_system = "Rules. " * 800  # past the minimum cacheable prefix
    req1 = LLMRequest(
        model="claude-opus-5-5",
        system=long_system,
        messages=[text_message("user", "hi")],
        tools=TOOLS,
    )
    try:
        f1 = await client.complete(req1)
        req2 = LLMRequest(
            model="claude-opus-5-5",
            system=long_system,
            messages=[text_message("user", "hi"), f1.message, text_message("user", "again")],
            tools=TOOLS,
        )
        f2 = await client.complete(req2)
    finally:
        await client.aclose()
    body = fake_llm.requests[0].json
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert f1.usage.cache_write_tokens > 0
    assert f2.usage.cache_read_tokens > 0 and fake_llm.requests[1].cache is not None
    assert fake_llm.requests[1].cache.read_tokens == f2.usage.cache_read_tokens


@pytest.mark.parametrize("wire", ["openai-responses", "openai-chat"])
async def test_openai_cache_key_and_stable_prefix(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.text("a"), fakellm.text("b"))
    client = make_client(fake_llm, wire)
    try:
        f1 = await client.complete(make_request(wire))
        req2 = make_request(
            wire, [text_message("user", "hello"), f1.message, text_message("user", "next")]
        )
        await client.complete(req2)
        again = client.request_body(req2)
    finally:
        await client.aclose()
    first, second = fake_llm.requests
    assert first.json["prompt_cache_key"] == second.json["prompt_cache_key"] == "ws-test"
    assert second.body == again
    # the first request's conversation is a prefix of the second's
    key = "input" if wire == "openai-responses" else "messages"
    assert second.json[key][: len(first.json[key])] == first.json[key]


# Switching wires -----------------------------------------------------------------------------


async def test_switching_wires_drops_foreign_replay_state(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.reply(fakellm.Reasoning("secret plan"), "Calling.", fakellm.ToolCall("bash", {"script": "ls"}, id="toolu_1")),
        fakellm.text("responses turn"),
        fakellm.text("chat turn"),
    )  # fmt: skip
    anthropic = make_client(fake_llm, "anthropic")
    try:
        turn = await anthropic.complete(make_request("anthropic"))
    finally:
        await anthropic.aclose()
    assert turn.message["content"][0].get("wire") == "anthropic"
    history: list[Message] = [
        text_message("user", "hello"),
        turn.message,
        {
            "role": "tool",
            "content": [
                {"type": "tool_result", "call_id": "toolu_1", "name": "bash", "output": "a.py"}
            ],
        },
    ]
    for wire in ("openai-responses", "openai-chat"):
        client = make_client(fake_llm, wire)
        try:
            finish = await client.complete(make_request(wire, history))
        finally:
            await client.aclose()
        assert isinstance(finish, Finish)
    responses_body, chat_body = fake_llm.requests[1].json, fake_llm.requests[2].json
    assert [i["type"] for i in responses_body["input"]] == [
        "message", "message", "function_call", "function_call_output"]  # fmt: skip
    assert "signature" not in orjson.dumps(responses_body).decode()
    assistant = chat_body["messages"][2]
    assert assistant["content"] == "Calling." and "reasoning_content" not in assistant
    assert all(r.error is None for r in fake_llm.requests)


# Failures ------------------------------------------------------------------------------------


# Direct connections go through xum's lean HTTP client; behind a proxy, requests go through
# httpx instead. Here the fake server is the proxy: the client is pointed at a host that does
# not exist and reaches it only because HTTP_PROXY names the fake server, which answers the
# absolute-form request itself. The failure tests below run both ways (`how`).

UPSTREAM = "http://llm.example.test"  # .test never resolves: only the proxy can answer


PROXY_VARS = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")


def route(server: FakeLLM, monkeypatch: pytest.MonkeyPatch, how: str) -> str | None:
    """Set the environment for a direct connection or one through the fake server as an HTTP
    proxy; the base URL to give the client (None: the server's own)."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    if how == "direct":
        return None
    monkeypatch.setenv("HTTP_PROXY", server.url)
    return f"{UPSTREAM}/v1"


@pytest.fixture
def proxied(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> str | None:
    return route(fake_llm, monkeypatch, "proxy")


def assert_went_through_the_proxy(server: FakeLLM, wire: Wire) -> None:
    assert server.requests
    for rec in server.requests:
        assert rec.target == UPSTREAM + PATH[wire] and rec.path == PATH[wire]
        assert rec.headers["host"] == "llm.example.test"


@pytest.mark.parametrize("how", ["direct", "proxy"])
@pytest.mark.parametrize("wire", WIRES)
async def test_429_with_retry_after_then_success(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, wire: Wire, how: str
) -> None:
    base_url = route(fake_llm, monkeypatch, how)
    fake_llm.script(fakellm.rate_limited(retry_after=2), fakellm.text("recovered"))
    sleeps = Sleeps()
    client = make_client(fake_llm, wire, sleeps, base_url=base_url)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    retry = events[0]
    assert isinstance(retry, Retrying)
    assert (retry.attempt, retry.delay_s, retry.discard_partial) == (1, 2.0, False)
    assert "rate_limit" in retry.reason and sleeps.delays == [2.0]
    assert texts(events) == "recovered" and len(fake_llm.requests) == 2
    if how == "proxy":
        assert_went_through_the_proxy(fake_llm, wire)


@pytest.mark.parametrize("wire", WIRES)
async def test_500_until_retries_are_exhausted(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(*[fakellm.error(500, message="internal oops") for _ in range(4)])
    sleeps = Sleeps()
    client = make_client(fake_llm, wire, sleeps, max_retries=3)
    retries: list[Retrying] = []
    with pytest.raises(LLMError) as info:
        try:
            async for event in client.stream(make_request(wire)):
                if isinstance(event, Retrying):
                    retries.append(event)
        finally:
            await client.aclose()
    err = info.value
    assert err.kind == "server" and err.status == 500 and err.attempts == 4
    assert "gave up after 4 attempts" in err.message and "internal oops" in err.message
    assert [r.attempt for r in retries] == [1, 2, 3]
    assert sleeps.delays == [0.5, 1.0, 2.0]  # exponential backoff (jitter off)
    assert len(fake_llm.requests) == 4


async def test_anthropic_529_overloaded_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.overloaded(), fakellm.text("fine now"))
    client = make_client(fake_llm, "anthropic")
    try:
        events = await collect(client, make_request("anthropic"))
    finally:
        await client.aclose()
    assert isinstance(events[0], Retrying) and "overloaded" in events[0].reason
    assert texts(events) == "fine now"


@pytest.mark.parametrize("wire", WIRES)
async def test_in_band_error_mid_stream_is_retried_with_discard(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    fake_llm.script(
        fakellm.text("partial answer that will be thrown away", chunk_size=4,
                     stream_error=fakellm.StreamError(after_event=8)),
        fakellm.text("clean answer"),
    )  # fmt: skip
    client = make_client(fake_llm, wire)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1 and retries[0].discard_partial is True
    assert texts(events[: events.index(retries[0])])  # deltas had been streamed
    assert texts(after_last_retry(events)) == "clean answer"


@pytest.mark.parametrize("how", ["direct", "proxy"])
@pytest.mark.parametrize("wire", WIRES)
async def test_disconnect_mid_stream_then_success(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, wire: Wire, how: str
) -> None:
    base_url = route(fake_llm, monkeypatch, how)
    cut = 3000 if wire == "openai-responses" else 900  # past the first text deltas, not the end
    fake_llm.script(
        fakellm.text("x" * 200, chunk_size=10, disconnect=fakellm.Disconnect(after_bytes=cut)),
        fakellm.text("whole reply"),
    )
    client = make_client(fake_llm, wire, base_url=base_url)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1 and retries[0].discard_partial is True
    assert "network" in retries[0].reason
    assert texts(events[: events.index(retries[0])])  # something was streamed before the cut
    finish = events[-1]
    assert isinstance(finish, Finish) and texts(after_last_retry(events)) == "whole reply"
    assert finish.message["content"] == [{"type": "text", "text": "whole reply"}]
    if how == "proxy":
        assert_went_through_the_proxy(fake_llm, wire)


@pytest.mark.parametrize("wire", WIRES)
async def test_connection_closed_before_headers_is_retried(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(
        fakellm.text("never", disconnect=fakellm.Disconnect(before_headers=True)),
        fakellm.text("second try"),
    )
    client = make_client(fake_llm, wire)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    assert isinstance(events[0], Retrying) and events[0].discard_partial is False
    assert texts(events) == "second try"


# The httpx path -------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_text_reply_through_a_proxy(
    fake_llm: FakeLLM, proxied: str | None, wire: Wire
) -> None:
    fake_llm.script(fakellm.text("Hello through the proxy.", chunk_size=5))
    client = make_client(fake_llm, wire, base_url=proxied)
    request = make_request(wire)
    try:
        events = await collect(client, request)
    finally:
        await client.aclose()
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert texts(events) == "Hello through the proxy."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    (rec,) = fake_llm.requests
    assert rec.body == client.request_body(request) and rec.status == 200
    assert_went_through_the_proxy(fake_llm, wire)


@pytest.mark.parametrize("how", ["direct", "proxy"])
@pytest.mark.parametrize("wire", WIRES)
async def test_connection_reset_mid_stream_is_retried(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, wire: Wire, how: str
) -> None:
    base_url = route(fake_llm, monkeypatch, how)
    cut = 3000 if wire == "openai-responses" else 900
    reset = fakellm.Disconnect(after_bytes=cut, reset=True)  # a TCP RST, not a clean close
    fake_llm.script(
        fakellm.text("x" * 200, chunk_size=10, disconnect=reset), fakellm.text("after the reset")
    )
    client = make_client(fake_llm, wire, base_url=base_url)
    try:
        events = await collect(client, make_request(wire))
    finally:
        await client.aclose()
    retries = [e for e in events if isinstance(e, Retrying)]
    # The RST may discard bytes the client had not read yet, so how much text came before the
    # retry varies; that it is retried as a network failure and then completes does not.
    assert len(retries) == 1 and "network" in retries[0].reason
    finish = events[-1]
    assert isinstance(finish, Finish) and texts(after_last_retry(events)) == "after the reset"
    assert finish.message["content"] == [{"type": "text", "text": "after the reset"}]
    assert len(fake_llm.requests) == 2
    if how == "proxy":
        assert_went_through_the_proxy(fake_llm, wire)


@pytest.mark.parametrize("wire", WIRES)
async def test_malformed_frame_is_not_retried(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(
        fakellm.text("some text here", malformed=fakellm.Malformed(after_event=2)),
        fakellm.text("unused"),
    )
    client = make_client(fake_llm, wire)
    with pytest.raises(LLMError) as info:
        try:
            await collect(client, make_request(wire))
        finally:
            await client.aclose()
    assert info.value.kind == "invalid_response" and not info.value.retryable
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_rejected_key_is_an_auth_error_without_the_key(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.error(401, message=f"bad key {KEY}"))
    client = make_client(fake_llm, wire)
    with pytest.raises(LLMError) as info:
        try:
            await collect(client, make_request(wire))
        finally:
            await client.aclose()
    err = info.value
    assert err.kind == "auth" and "env:TEST_KEY" in err.message
    assert KEY not in str(err) and len(fake_llm.requests) == 1


async def test_unknown_model_404_is_not_found(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.error(404, message="model: claude-nope"))
    client = make_client(fake_llm, "anthropic")
    with pytest.raises(LLMError) as info:
        try:
            await collect(client, make_request("anthropic"))
        finally:
            await client.aclose()
    assert info.value.kind == "not_found" and "claude-opus-5-5" in info.value.message


async def test_context_too_long_is_reported_as_such(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.error(400, message="prompt is too long: 1200000 tokens > 1000000 maximum")
    )
    client = make_client(fake_llm, "anthropic")
    with pytest.raises(LLMError) as info:
        try:
            await collect(client, make_request("anthropic"))
        finally:
            await client.aclose()
    assert info.value.kind == "context_length" and len(fake_llm.requests) == 1


async def test_retry_after_beyond_the_cap_fails_at_once(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.rate_limited(retry_after=3600))
    sleeps = Sleeps()
    client = make_client(fake_llm, "openai-responses", sleeps)
    with pytest.raises(LLMError) as info:
        try:
            await collect(client, make_request("openai-responses"))
        finally:
            await client.aclose()
    assert info.value.kind == "rate_limit" and "3600 s" in info.value.message
    assert sleeps.delays == []


# Cancellation --------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
async def test_closing_the_stream_stops_promptly(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.text("slow " * 400, chunk_size=5, delay=0.05))  # ~20 s to the end
    client = make_client(fake_llm, wire)
    try:
        stream = client.stream(make_request(wire))
        async for event in stream:  # read up to the first text, then stop
            if isinstance(event, TextDelta):
                break
        await asyncio.wait_for(stream.aclose(), timeout=5)
    finally:
        await client.aclose()
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_cancelling_the_task_propagates(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.text("slow " * 400, chunk_size=5, delay=0.05))  # ~20 s to the end
    client = make_client(fake_llm, wire)
    first = asyncio.Event()

    async def consume() -> None:
        async for event in client.stream(make_request(wire)):
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    try:
        await asyncio.wait_for(first.wait(), timeout=10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=5)
    finally:
        await client.aclose()


async def test_cancelling_during_a_retry_wait(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.rate_limited(retry_after=30), fakellm.text("never"))
    client = make_client(fake_llm, "anthropic")
    client_real = open_client(client.endpoint)  # real asyncio.sleep this time

    async def consume() -> list[StreamEvent]:
        return [e async for e in client_real.stream(make_request("anthropic"))]

    task = asyncio.create_task(consume())
    try:
        await asyncio.wait_for(fake_llm.wait_for_requests_async(1), timeout=10)
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=5)
    finally:
        await client.aclose()
        await client_real.aclose()
    assert len(fake_llm.requests) == 1


# Recorded Anthropic streams, replayed byte for byte --------------------------------------------


async def replay(server: FakeLLM, name: str) -> list[StreamEvent]:
    server.script(fakellm.replay(FIXTURES / name))
    client = make_client(server, "anthropic")
    try:
        return await collect(client, make_request("anthropic", thinking="off"))
    finally:
        await client.aclose()


async def test_replay_basic(fake_llm: FakeLLM) -> None:
    events = await replay(fake_llm, "basic_response.txt")
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert texts(events) == "Hello there!" and finish.usage.output_tokens == 6


async def test_replay_tool_use(fake_llm: FakeLLM) -> None:
    finish = (await replay(fake_llm, "tool_use_response.txt"))[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"
    call = finish.message["content"][-1]
    assert call["type"] == "tool_call" and orjson.loads(call["arguments"]) == {"location": "Paris"}


async def test_replay_invalid_tool_json_keeps_raw_arguments(fake_llm: FakeLLM) -> None:
    finish = (await replay(fake_llm, "tool_use_invalid_json_response.txt"))[-1]
    assert isinstance(finish, Finish)
    call = finish.message["content"][-1]
    assert (
        call["type"] == "tool_call"
        and call["arguments"] == '{"location": "Paris", "unit": celsius}'
    )


async def test_replay_refusal(fake_llm: FakeLLM) -> None:
    finish = (await replay(fake_llm, "refusal_response.txt"))[-1]
    assert (
        isinstance(finish, Finish)
        and finish.reason == "refusal"
        and finish.message["content"] == []
    )


async def test_replay_out_of_order_block(fake_llm: FakeLLM) -> None:
    events = await replay(fake_llm, "out_of_order_response.txt")
    assert not [e for e in events if isinstance(e, Retrying)]
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"


async def test_replay_server_tool_use(fake_llm: FakeLLM) -> None:
    events = await replay(fake_llm, "server_tool_use_response.txt")
    assert not [e for e in events if isinstance(e, ToolCallStart)]
    finish = events[-1]
    assert isinstance(finish, Finish)
    text, search = finish.message["content"]
    assert text == {"type": "text", "text": "Let me search for that."}
    assert search["type"] == "web_search" and search["query"] == "weather in Paris"


async def test_replay_missing_usage(fake_llm: FakeLLM) -> None:
    finish = (await replay(fake_llm, "missing_usage_response.txt"))[-1]
    assert isinstance(finish, Finish)
    assert (
        finish.usage.input_tokens,
        finish.usage.cache_read_tokens,
        finish.usage.cache_write_tokens,
    ) == (19, 5, 3)
