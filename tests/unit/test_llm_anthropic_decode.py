"""Decoding Anthropic streams: the recorded fixtures and the cases they do not cover."""

from __future__ import annotations

import orjson
import pytest

from tests.fixtures import ANTHROPIC_SSE
from xum.llm.anthropic import AnthropicClient, AnthropicDecoder
from xum.llm.endpoint import Endpoint
from xum.llm.errors import ErrorContext, LLMError
from xum.llm.sse import parse_sse_bytes
from xum.llm.types import (
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageUpdate,
)

FIXTURES = ANTHROPIC_SSE
CTX = ErrorContext("anthropic", "claude-test", "https://api.anthropic.com/v1", "env:X", "sk-secret")


def decode(raw: bytes, model: str = "claude-test") -> tuple[list[StreamEvent], Finish]:
    decoder = AnthropicDecoder(CTX, model)
    events: list[StreamEvent] = []
    for name, data in parse_sse_bytes(raw):
        events += decoder.feed(name, data)
    return events, decoder.finish()


def frames(*objs: dict[str, object]) -> bytes:
    return b"".join(
        b"event: " + str(o["type"]).encode() + b"\ndata: " + orjson.dumps(o) + b"\n\n" for o in objs
    )


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_basic_text_with_pings_and_split_usage() -> None:
    events, finish = decode(fixture("basic_response.txt"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " there", "!"]
    assert finish.reason == "stop" and finish.raw_reason == "end_turn"
    assert finish.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello there!"}],
    }
    assert finish.usage.input_tokens == 11 and finish.usage.output_tokens == 6
    assert finish.response_id == "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK"


def test_tool_call_with_fragmented_arguments() -> None:
    events, finish = decode(fixture("tool_use_response.txt"))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart(0, "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather")]
    fragments = [e.arguments for e in events if isinstance(e, ToolCallDelta)]
    assert "".join(fragments) == '{"location": "Paris"}' and len(fragments) == 4
    assert events.index(starts[0]) < events.index(ToolCallEnd(0))
    assert finish.reason == "tool_calls"
    call = finish.message["content"][1]
    assert call == {
        "type": "tool_call",
        "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        "name": "get_weather",
        "arguments": '{"location": "Paris"}',
    }
    assert finish.usage.input_tokens == 377 and finish.usage.output_tokens == 65


def test_invalid_tool_json_keeps_the_raw_text() -> None:
    _, finish = decode(fixture("tool_use_invalid_json_response.txt"))
    call = finish.message["content"][1]
    assert call["type"] == "tool_call"
    assert call["arguments"] == '{"location": "Paris", "unit": celsius}'
    assert finish.reason == "tool_calls"


def test_refusal_is_a_finish_not_an_error() -> None:
    _, finish = decode(fixture("refusal_response.txt"))
    assert finish.reason == "refusal" and finish.raw_reason == "refusal"
    assert finish.message["content"] == []  # the empty text block carries nothing
    assert finish.usage.output_tokens == 120 and finish.usage.reasoning_tokens == 67


def test_block_at_index_one_without_index_zero_and_no_message_delta() -> None:
    events, finish = decode(fixture("out_of_order_response.txt"))
    assert finish.reason == "stop" and finish.raw_reason == ""
    assert finish.message["content"] == []
    assert not [e for e in events if isinstance(e, TextDelta)]


def test_server_tool_use_is_not_a_client_tool_call() -> None:
    events, finish = decode(fixture("server_tool_use_response.txt"))
    assert not [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta | ToolCallEnd)]
    text, search = finish.message["content"]
    assert text == {"type": "text", "text": "Let me search for that."}
    # The provider's own search is kept (for the transcript and a replay), not run by xum.
    assert search["type"] == "web_search" and search["query"] == "weather in Paris"
    assert search["results"] == [] and search["id"] == "srvtoolu_01WebSearch"
    assert finish.reason == "stop"


def test_usage_only_in_message_delta_counts_cache_into_input() -> None:
    events, finish = decode(fixture("missing_usage_response.txt"))
    assert finish.usage.input_tokens == 11 + 3 + 5
    assert finish.usage.cache_read_tokens == 5 and finish.usage.cache_write_tokens == 3
    assert isinstance(events[-1], UsageUpdate) and events[-1].usage == finish.usage


def test_thinking_with_signature_and_redacted_thinking_keep_replay_state() -> None:
    raw = frames(
        {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "think."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "BLOB"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Done."}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )  # fmt: skip
    events, finish = decode(raw, model="claude-opus-5-5")
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Let me ", "think."]
    assert finish.message["content"] == [
        {
            "type": "reasoning",
            "text": "Let me think.",
            "wire": "anthropic",
            "state": {"model": "claude-opus-5-5", "signature": "SIG"},
        },
        {
            "type": "reasoning",
            "text": "",
            "wire": "anthropic",
            "state": {"model": "claude-opus-5-5", "redacted": "BLOB"},
        },
        {"type": "text", "text": "Done."},
    ]


def test_max_tokens_is_length() -> None:
    raw = frames(
        {"type": "message_start", "message": {"id": "m"}},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    )  # fmt: skip
    assert decode(raw)[1].reason == "length"


def test_overloaded_error_event_mid_stream_is_retryable() -> None:
    raw = frames(
        {"type": "message_start", "message": {"id": "m"}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    with pytest.raises(LLMError) as info:
        decode(raw)
    assert info.value.kind == "overloaded" and info.value.retryable


def test_stream_without_message_stop_is_a_dropped_stream() -> None:
    raw = frames(
        {"type": "message_start", "message": {"id": "m"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    with pytest.raises(LLMError) as info:
        decode(raw)
    assert info.value.kind == "network" and info.value.retryable


def test_bad_json_frame_is_invalid_response() -> None:
    with pytest.raises(LLMError) as info:
        decode(b"event: content_block_delta\ndata: {not json\n\n")
    assert info.value.kind == "invalid_response" and not info.value.retryable


def test_whole_message_body_gives_the_same_events() -> None:
    client = AnthropicClient(Endpoint("anthropic", "anthropic", "http://x/v1"))
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "S"},
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"script": "ls"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 10},
    }
    decoder = AnthropicDecoder(CTX, "claude-test")
    events: list[StreamEvent] = []
    for name, obj in client.body_frames(body):
        events += decoder.feed_obj(name, obj)
    finish = decoder.finish()
    assert ToolCallStart(0, "toolu_1", "bash") in events
    assert ToolCallDelta(0, '{"script":"ls"}') in events and ToolCallEnd(0) in events
    assert finish.reason == "tool_calls" and finish.usage.input_tokens == 13
    assert [p["type"] for p in finish.message["content"]] == ["reasoning", "text", "tool_call"]
