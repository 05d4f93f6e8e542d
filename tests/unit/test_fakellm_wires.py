"""The three wire formats, streaming and not, over real HTTP against the fake server."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, Reasoning, Text, ToolCall

# One client per module: creating an httpx.Client costs ~20 ms (its TLS context).
HTTP = httpx.Client(timeout=10)

ANTHROPIC_BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "thinking": {"type": "enabled", "budget_tokens": 512},
    "system": "You are terse.",
    "messages": [{"role": "user", "content": "weather?"}],
}
RESPONSES_BODY: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": "You are terse.",
    "input": [{"role": "user", "content": "weather?"}],
    "reasoning": {"effort": "low", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
}
CHAT_BODY: dict[str, Any] = {
    "model": "gpt-5",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "weather?"},
    ],
}
ARGS = {"location": "Paris", "unit": "celsius"}
FULL = fakellm.reply(
    Reasoning("Need the weather tool.", signature="sig-abc", encrypted_content="enc-xyz"),
    Text("Let me check."),
    ToolCall("get_weather", ARGS, id="call_1"),
    chunk_size=5,
)


def sse_events(server: FakeLLM, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(event name, parsed data) for each event. Parsed by httpx-sse, a third-party parser that
    follows the SSE spec strictly, so the server's framing is checked independently of
    xum.llm.sse (the parser xum's own clients use)."""
    out: list[tuple[str, Any]] = []
    url = server.base_url() + path
    with connect_sse(HTTP, "POST", url, json={**body, "stream": True}) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        for sse in source.iter_sse():
            out.append((sse.event, sse.data if sse.data == "[DONE]" else json.loads(sse.data)))
    return out


def post_json(server: FakeLLM, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = HTTP.post(server.base_url() + path, json=body)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    data: dict[str, Any] = r.json()
    return data


# Anthropic -----------------------------------------------------------------------------------


def test_anthropic_stream_events_in_provider_order(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    events = sse_events(fake_llm, "/messages", ANTHROPIC_BODY)
    names = [e for e, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    for name, data in events:
        assert data["type"] == name  # the event line and the data type always agree

    starts = [d["content_block"] for e, d in events if e == "content_block_start"]
    assert starts == [
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {}},
    ]
    deltas = [d for e, d in events if e == "content_block_delta"]
    thinking = "".join(d["delta"].get("thinking", "") for d in deltas if d["index"] == 0)
    assert thinking == "Need the weather tool."
    assert [d["delta"] for d in deltas if d["delta"]["type"] == "signature_delta"] == [
        {"type": "signature_delta", "signature": "sig-abc"}
    ]
    assert "".join(d["delta"]["text"] for d in deltas if d["index"] == 1) == "Let me check."
    fragments = [d["delta"]["partial_json"] for d in deltas if d["index"] == 2]
    assert fragments[0] == ""  # the provider opens tool input with an empty fragment
    assert all(len(f) <= 5 for f in fragments) and len(fragments) > 3
    assert json.loads("".join(fragments)) == ARGS
    assert [d["index"] for e, d in events if e == "content_block_stop"] == [0, 1, 2]

    start_usage = events[0][1]["message"]["usage"]
    assert set(start_usage) >= {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    }
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    # Output: each text measured as ceil(utf-8 bytes / 4).
    expected = fakellm.count_tokens("Need the weather tool.") + fakellm.count_tokens(
        "Let me check."
    )
    expected += fakellm.count_tokens("get_weather" + json.dumps(ARGS, separators=(",", ":")))
    assert delta["usage"] == {"output_tokens": expected}


def test_anthropic_json_body(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    data = post_json(fake_llm, "/messages", ANTHROPIC_BODY)
    assert data["type"] == "message" and data["role"] == "assistant"
    assert data["model"] == "claude-sonnet-4-5"
    assert data["id"].startswith("msg_")
    assert data["content"] == [
        {"type": "thinking", "thinking": "Need the weather tool.", "signature": "sig-abc"},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": ARGS},
    ]
    assert data["stop_reason"] == "tool_use" and data["stop_sequence"] is None
    usage = data["usage"]
    rec = fake_llm.requests[0]
    assert rec.cache is not None
    assert usage["input_tokens"] == rec.cache.prompt_tokens  # no breakpoints: nothing cached
    assert usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] == 0


def test_anthropic_reasoning_needs_thinking_enabled(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    body = {k: v for k, v in ANTHROPIC_BODY.items() if k != "thinking"}
    data = post_json(fake_llm, "/messages", body)
    assert [b["type"] for b in data["content"]] == ["text", "tool_use"]
    assert fake_llm.requests[0].notes == ["reasoning dropped: the request did not enable thinking"]


def test_anthropic_generated_signature_and_stop_override(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.reply(Reasoning("hmm"), "partial", stop_reason="length"),
        fakellm.text("no", stop_reason="refusal"),
    )
    data = post_json(fake_llm, "/messages", ANTHROPIC_BODY)
    assert len(data["content"][0]["signature"]) > 20
    assert data["stop_reason"] == "max_tokens"  # the neutral "length" in Anthropic's words
    assert post_json(fake_llm, "/messages", ANTHROPIC_BODY)["stop_reason"] == "refusal"


def test_usage_override_is_written_verbatim(fake_llm: FakeLLM) -> None:
    usage = fakellm.Usage(input_tokens=11, output_tokens=7, cache_read_tokens=5)
    fake_llm.script(fakellm.text("x", usage=usage), fakellm.text("x", usage=usage))
    a = post_json(fake_llm, "/messages", ANTHROPIC_BODY)["usage"]
    assert (a["input_tokens"], a["output_tokens"], a["cache_read_input_tokens"]) == (11, 7, 5)
    c = post_json(fake_llm, "/chat/completions", CHAT_BODY)["usage"]
    assert (c["prompt_tokens"], c["completion_tokens"], c["total_tokens"]) == (11, 7, 18)
    assert c["prompt_tokens_details"]["cached_tokens"] == 5


# OpenAI Responses ----------------------------------------------------------------------------


def test_responses_stream_events(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    events = sse_events(fake_llm, "/responses", RESPONSES_BODY)
    names = [e for e, _ in events]
    assert names[:2] == ["response.created", "response.in_progress"]
    assert names[-1] == "response.completed"
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    for name, data in events:
        assert data["type"] == name

    added = [d["item"] for e, d in events if e == "response.output_item.added"]
    assert [i["type"] for i in added] == ["reasoning", "message", "function_call"]
    summary = "".join(d["delta"] for e, d in events if e == "response.reasoning_summary_text.delta")
    assert summary == "Need the weather tool."
    text = "".join(d["delta"] for e, d in events if e == "response.output_text.delta")
    assert text == "Let me check."
    frags = [d["delta"] for e, d in events if e == "response.function_call_arguments.delta"]
    assert len(frags) > 3 and all(len(f) <= 5 for f in frags)
    assert json.loads("".join(frags)) == ARGS
    call_item = added[2]
    assert all(
        d["item_id"] == call_item["id"]
        for e, d in events
        if e == "response.function_call_arguments.delta"
    )

    done = {d["item"]["type"]: d["item"] for e, d in events if e == "response.output_item.done"}
    assert done["reasoning"]["encrypted_content"] == "enc-xyz"
    assert done["reasoning"]["summary"] == [
        {"type": "summary_text", "text": "Need the weather tool."}
    ]
    assert done["function_call"]["call_id"] == "call_1"
    assert done["function_call"]["name"] == "get_weather"
    assert done["function_call"]["status"] == "completed"

    final = events[-1][1]["response"]
    assert final["status"] == "completed"
    assert [o["type"] for o in final["output"]] == ["reasoning", "message", "function_call"]
    usage = final["usage"]
    reasoning = fakellm.count_tokens("Need the weather tool.")
    assert usage["output_tokens_details"] == {"reasoning_tokens": reasoning}
    assert usage["input_tokens_details"] == {"cached_tokens": 0}
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_responses_json_body(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    data = post_json(fake_llm, "/responses", RESPONSES_BODY)
    assert data["object"] == "response" and data["status"] == "completed"
    assert data["id"].startswith("resp_") and data["instructions"] == "You are terse."
    message = data["output"][1]
    assert message["content"][0]["type"] == "output_text"
    assert message["content"][0]["text"] == "Let me check."
    assert json.loads(data["output"][2]["arguments"]) == ARGS
    assert data["usage"]["input_tokens"] == fake_llm.requests[0].cache.prompt_tokens  # type: ignore[union-attr]


def test_responses_reasoning_details_only_when_asked(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    body = {k: v for k, v in RESPONSES_BODY.items() if k not in ("reasoning", "include")}
    events = sse_events(fake_llm, "/responses", body)
    names = {e for e, _ in events}
    assert "response.reasoning_summary_text.delta" not in names
    item = next(d["item"] for e, d in events if e == "response.output_item.done")
    assert item == {"id": item["id"], "type": "reasoning", "summary": []}


def test_responses_generated_encrypted_content(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.reply(Reasoning("x"), "y"))
    data = post_json(fake_llm, "/responses", RESPONSES_BODY)
    assert data["output"][0]["encrypted_content"].startswith("gAAAA")


def test_responses_max_tokens_is_incomplete(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("cut sh", stop_reason="max_tokens"))
    events = sse_events(fake_llm, "/responses", RESPONSES_BODY)
    assert events[-1][0] == "response.incomplete"
    final = events[-1][1]["response"]
    assert final["status"] == "incomplete"
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}


# OpenAI Chat Completions ---------------------------------------------------------------------


def test_chat_stream_chunks(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL)
    body = {**CHAT_BODY, "stream_options": {"include_usage": True}}
    events = sse_events(fake_llm, "/chat/completions", body)
    assert all(e == "message" for e, _ in events)  # data-only frames
    assert events[-1][1] == "[DONE]"
    chunks = [d for _, d in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "Need the weather tool."
    assert "".join(d.get("content", "") for d in deltas) == "Let me check."
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert calls[0] == {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    assert all(set(tc) == {"index", "function"} for tc in calls[1:])
    assert json.loads("".join(tc["function"]["arguments"] for tc in calls)) == ARGS
    assert chunks[-2]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assert all(c["usage"] is None for c in chunks[:-1])
    last = chunks[-1]
    assert last["choices"] == []
    assert last["usage"]["prompt_tokens"] == fake_llm.requests[0].cache.prompt_tokens  # type: ignore[union-attr]
    assert last["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    reasoning = fakellm.count_tokens("Need the weather tool.")
    assert last["usage"]["completion_tokens_details"]["reasoning_tokens"] == reasoning


def test_chat_stream_without_usage_has_no_usage_chunk(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("hello", stop_reason="length"))
    events = sse_events(fake_llm, "/chat/completions", CHAT_BODY)
    chunks = [d for _, d in events[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_chat_json_body(fake_llm: FakeLLM) -> None:
    fake_llm.script(FULL, fakellm.text("just text"))
    data = post_json(fake_llm, "/chat/completions", CHAT_BODY)
    assert data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] == "Let me check."
    assert message["reasoning_content"] == "Need the weather tool."
    assert message["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "get_weather",
                "arguments": json.dumps(ARGS, separators=(",", ":")),
            },
        }
    ]
    plain = post_json(fake_llm, "/chat/completions", CHAT_BODY)["choices"][0]
    assert plain["finish_reason"] == "stop"
    assert "tool_calls" not in plain["message"]


def argument_text(path: str, stream: str) -> str:
    """The tool-argument fragments of a raw event stream, joined, for each wire."""
    out: list[str] = []
    for frame in stream.split("\n\n"):
        data = frame.rpartition("data: ")[2]
        if not data.startswith("{"):
            continue
        obj = json.loads(data)
        if path == "/messages":
            out.append(obj.get("delta", {}).get("partial_json", ""))
        elif path == "/responses":
            if obj["type"] == "response.function_call_arguments.delta":
                out.append(obj["delta"])
        else:
            for choice in obj["choices"]:
                out += [tc["function"]["arguments"] for tc in choice["delta"].get("tool_calls", [])]
    return "".join(out)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/messages", ANTHROPIC_BODY),
        ("/responses", RESPONSES_BODY),
        ("/chat/completions", CHAT_BODY),
    ],
)
def test_raw_invalid_tool_arguments_stream_verbatim(
    fake_llm: FakeLLM, path: str, body: dict[str, Any]
) -> None:
    raw = '{"location": "Par'
    fake_llm.script(fakellm.tool_call("get_weather", raw, chunk_size=4))
    r = HTTP.post(fake_llm.base_url() + path, json={**body, "stream": True})
    assert argument_text(path, r.text) == raw


def test_tool_ids_are_generated_in_wire_style_and_unique(fake_llm: FakeLLM) -> None:
    two = fakellm.reply(ToolCall("a"), ToolCall("b"))
    fake_llm.script(two, two)
    first = post_json(fake_llm, "/messages", ANTHROPIC_BODY)["content"]
    second = post_json(fake_llm, "/chat/completions", CHAT_BODY)["choices"][0]["message"]
    ids = [b["id"] for b in first] + [c["id"] for c in second["tool_calls"]]
    assert ids[0].startswith("toolu_") and ids[2].startswith("call_")
    assert len(set(ids)) == 4
    assert first[0]["input"] == {}


def test_models_listing_parses_as_both_shapes(fake_llm: FakeLLM) -> None:
    fake_llm.models = ["claude-a", "gpt-b"]
    data = HTTP.get(fake_llm.base_url() + "/models").json()
    assert data["object"] == "list" and data["has_more"] is False
    assert [m["id"] for m in data["data"]] == ["claude-a", "gpt-b"]
    for m in data["data"]:
        assert m["object"] == "model" and m["type"] == "model" and m["display_name"] == m["id"]
    assert (data["first_id"], data["last_id"]) == ("claude-a", "gpt-b")
    assert HTTP.get(fake_llm.base_url() + "/models/gpt-b").json()["id"] == "gpt-b"
    assert HTTP.get(fake_llm.base_url() + "/models/nope").status_code == 404
