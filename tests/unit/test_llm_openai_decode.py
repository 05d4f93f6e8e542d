"""Decoding OpenAI Responses and Chat Completions streams from hand-written frames."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from xum.llm.endpoint import Endpoint
from xum.llm.errors import ErrorContext, LLMError
from xum.llm.openai_chat import ChatDecoder, OpenAIChatClient
from xum.llm.openai_responses import OpenAIResponsesClient, ResponsesDecoder
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

CTX = ErrorContext("openai", "gpt-6.1-sol", "https://api.openai.com/v1")


def run_responses(*objs: dict[str, Any]) -> tuple[list[StreamEvent], Finish]:
    decoder = ResponsesDecoder(CTX)
    events: list[StreamEvent] = []
    for obj in objs:
        events += decoder.feed(str(obj["type"]), orjson.dumps(obj))
    return events, decoder.finish()


def run_chat(*chunks: dict[str, Any] | str) -> tuple[list[StreamEvent], Finish]:
    decoder = ChatDecoder(CTX)
    events: list[StreamEvent] = []
    for chunk in chunks:
        data = chunk.encode() if isinstance(chunk, str) else orjson.dumps(chunk)
        events += decoder.feed("", data)
    return events, decoder.finish()


# Responses -----------------------------------------------------------------------------------

RS_ITEM = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Plan."}, {"type": "summary_text", "text": "Go."}],
    "encrypted_content": "ENC",
}
FC_ITEM = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "bash",
    "arguments": '{"script": "ls"}',
}
USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 12},
}


def test_responses_stream_with_reasoning_text_and_tool_call() -> None:
    events, finish = run_responses(
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning"}},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "Plan."},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 1, "delta": "Go."},
        {"type": "response.output_item.done", "output_index": 0, "item": RS_ITEM},
        {"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1"}},
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "Hi"},
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "!"},
        {"type": "response.output_item.added", "output_index": 2, "item": {**FC_ITEM, "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": '{"script": '},
        {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": '"ls"}'},
        {"type": "response.output_item.done", "output_index": 2, "item": FC_ITEM},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": USAGE}},
    )  # fmt: skip
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Plan.", "\n\nGo."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi", "!"]
    assert ToolCallStart(0, "call_1", "bash") in events and ToolCallEnd(0) in events
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ['{"script": ', '"ls"}']
    assert finish.reason == "tool_calls" and finish.response_id == "resp_1"
    reasoning, text, call = finish.message["content"]
    assert reasoning == {
        "type": "reasoning",
        "text": "Plan.\n\nGo.",
        "wire": "openai-responses",
        "state": {"id": "rs_1", "summary": ["Plan.", "Go."], "encrypted_content": "ENC"},
    }
    assert text == {"type": "text", "text": "Hi!"}
    assert call == {
        "type": "tool_call",
        "id": "call_1",
        "name": "bash",
        "arguments": '{"script": "ls"}',
        "wire": "openai-responses",
        "state": {"id": "fc_1"},
    }
    u = finish.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) == (100, 60, 30)
    assert (u.output_tokens, u.reasoning_tokens) == (20, 12)


def test_responses_incomplete_for_max_tokens_is_length() -> None:
    _, finish = run_responses(
        {"type": "response.output_text.delta", "output_index": 0, "delta": "cut"},
        {
            "type": "response.incomplete",
            "response": {
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
            },
        },
    )
    assert finish.reason == "length" and finish.raw_reason == "max_output_tokens"


def test_responses_refusal() -> None:
    events, finish = run_responses(
        {"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "No."},
        {"type": "response.completed", "response": {"status": "completed"}},
    )
    assert finish.reason == "refusal" and TextDelta("No.") in events


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        ({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "x"}}}, "server"),
        ({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}, "rate_limit"),
        ({"type": "error", "code": "context_length_exceeded", "message": "too long"}, "context_length"),
    ],
)  # fmt: skip
def test_responses_in_band_errors(event: dict[str, Any], kind: str) -> None:
    with pytest.raises(LLMError) as info:
        run_responses(event)
    assert info.value.kind == kind


def test_responses_stream_cut_before_completed_is_retryable() -> None:
    with pytest.raises(LLMError) as info:
        run_responses({"type": "response.output_text.delta", "output_index": 0, "delta": "a"})
    assert info.value.kind == "network" and info.value.retryable


def test_responses_whole_body_gives_the_same_message() -> None:
    client = OpenAIResponsesClient(Endpoint("openai", "openai-responses", "http://x/v1"))
    body = {
        "id": "resp_9",
        "status": "completed",
        "output": [
            RS_ITEM,
            {"type": "message", "content": [{"type": "output_text", "text": "Hi!"}]},
            FC_ITEM,
        ],
        "usage": USAGE,
    }
    decoder = ResponsesDecoder(CTX)
    events: list[StreamEvent] = []
    for name, obj in client.body_frames(body):
        events += decoder.feed_obj(name, obj)
    finish = decoder.finish()
    assert ReasoningDelta("Plan.\n\nGo.") in events and TextDelta("Hi!") in events
    assert events.count(ToolCallEnd(0)) == 1
    assert [p["type"] for p in finish.message["content"]] == ["reasoning", "text", "tool_call"]
    assert finish.reason == "tool_calls"


# Chat completions ----------------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "choices": [choice], **extra}


def test_chat_stream_with_reasoning_text_tool_calls_and_usage() -> None:
    events, finish = run_chat(
        chunk({"role": "assistant", "reasoning_content": "Think."}),
        chunk({"content": "Calling "}),
        chunk({"content": "two."}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "a", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x":'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "b", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
        chunk(finish="tool_calls"),
        {"id": "chatcmpl-1", "choices": [], "usage": {
            "prompt_tokens": 50, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 40},
            "completion_tokens_details": {"reasoning_tokens": 3}}},
        "[DONE]",
    )  # fmt: skip
    assert ReasoningDelta("Think.") in events
    assert [e for e in events if isinstance(e, ToolCallStart)] == [
        ToolCallStart(0, "c1", "a"),
        ToolCallStart(1, "c2", "b"),
    ]
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [ToolCallEnd(0), ToolCallEnd(1)]
    assert finish.reason == "tool_calls"
    reasoning, text, a, b = finish.message["content"]
    assert reasoning == {
        "type": "reasoning",
        "text": "Think.",
        "wire": "openai-chat",
        "state": {"field": "reasoning_content"},
    }
    assert text == {"type": "text", "text": "Calling two."}
    assert (a["type"], a.get("arguments")) == ("tool_call", '{"x":1}')
    assert b == {"type": "tool_call", "id": "c2", "name": "b", "arguments": "{}"}
    assert (finish.usage.input_tokens, finish.usage.cache_read_tokens) == (50, 40)
    assert isinstance(events[-1], UsageUpdate)


def test_chat_tool_calls_without_index_and_stop_reason_still_tool_calls() -> None:
    _, finish = run_chat(
        chunk({"tool_calls": [{"id": "x1", "function": {"name": "a", "arguments": '{"q": 1}'}}]}),
        chunk({"tool_calls": [{"id": "x2", "function": {"name": "b", "arguments": "{}"}}]}),
        chunk(finish="stop"),
    )  # no [DONE]: some servers just end the body after the finish chunk
    calls = [p for p in finish.message["content"] if p["type"] == "tool_call"]
    assert [(c["id"], c["name"]) for c in calls] == [("x1", "a"), ("x2", "b")]
    assert finish.reason == "tool_calls" and finish.raw_reason == "stop"


def test_chat_reasoning_field_and_deepseek_cache_usage() -> None:
    _, finish = run_chat(
        chunk({"reasoning": "hm"}),
        chunk({"content": "ok"}, "stop", usage={"prompt_tokens": 9, "completion_tokens": 1, "prompt_cache_hit_tokens": 8}),
        "[DONE]",
    )  # fmt: skip
    assert finish.message["content"][0].get("state") == {"field": "reasoning"}
    assert finish.usage.cache_read_tokens == 8 and finish.reason == "stop"


def test_chat_length_and_content_filter() -> None:
    assert run_chat(chunk({"content": "a"}, "length"), "[DONE]")[1].reason == "length"
    assert run_chat(chunk({}, "content_filter"), "[DONE]")[1].reason == "content_filter"


def test_chat_error_chunk_and_cut_stream() -> None:
    with pytest.raises(LLMError) as info:
        run_chat({"error": {"message": "upstream overloaded", "code": "overloaded"}})
    assert info.value.kind == "overloaded"
    with pytest.raises(LLMError) as cut:
        run_chat(chunk({"content": "partial"}))
    assert cut.value.kind == "network"


def test_chat_whole_body() -> None:
    client = OpenAIChatClient(Endpoint("ollama", "openai-chat", "http://x/v1"))
    body = {
        "id": "c",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Hi",
                    "tool_calls": [{"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }  # fmt: skip
    decoder = ChatDecoder(CTX)
    events: list[StreamEvent] = []
    for name, obj in client.body_frames(body):
        events += decoder.feed_obj(name, obj)
    finish = decoder.finish()
    assert TextDelta("Hi") in events and ToolCallStart(0, "t", "f") in events
    assert finish.reason == "tool_calls" and finish.usage.output_tokens == 2
