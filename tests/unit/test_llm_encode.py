"""Request encoding for the three wires: shape, caching markers, thinking, replay state."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from xum.llm.anthropic import AnthropicClient
from xum.llm.endpoint import Endpoint
from xum.llm.openai_chat import OpenAIChatClient
from xum.llm.openai_responses import OpenAIResponsesClient
from xum.llm.types import LLMRequest, Message, ThinkingLevel, ToolSpec, text_message

TOOLS = [
    ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("bash", "Run a script", {"type": "object", "properties": {"script": {"type": "string"}}}),
]  # fmt: skip


def history(reasoning_wire: str = "anthropic", model: str = "claude-opus-5-5") -> list[Message]:
    """user -> assistant (thinking, text, two tool calls) -> tool results -> user."""
    states: dict[str, dict[str, Any]] = {
        "anthropic": {"model": model, "signature": "SIG"},
        "openai-responses": {"id": "rs_1", "encrypted_content": "ENC", "summary": ["Plan."]},
        "openai-chat": {"field": "reasoning_content"},
    }
    reasoning_state = states[reasoning_wire]
    return [
        text_message("user", "Fix the bug."),
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "Plan.", "wire": reasoning_wire, "state": reasoning_state},
                {"type": "text", "text": "Looking."},
                {"type": "tool_call", "id": "call.1:a", "name": "read", "arguments": '{"path": "a.py"}',
                 "wire": "openai-responses", "state": {"id": "fc_1"}},
                {"type": "tool_call", "id": "call_2", "name": "bash", "arguments": "{not json"},
            ],
        },
        {
            "role": "tool",
            "content": [
                {"type": "tool_result", "call_id": "call.1:a", "name": "read", "output": "print(1)"},
                {"type": "tool_result", "call_id": "call_2", "name": "bash", "output": "bad args", "is_error": True},
            ],
        },
        text_message("user", "Go on."),
    ]  # fmt: skip


def request(model: str, thinking: ThinkingLevel = "medium", **kw: Any) -> LLMRequest:
    kw.setdefault("messages", history())
    return LLMRequest(model=model, system="You are xum.", tools=TOOLS, thinking=thinking, **kw)


def anthropic(provider: str = "anthropic", **options: Any) -> AnthropicClient:
    return AnthropicClient(
        Endpoint(provider, "anthropic", "https://api.anthropic.com/v1", body_options=options)
    )


def responses(provider: str = "openai", **options: Any) -> OpenAIResponsesClient:
    return OpenAIResponsesClient(
        Endpoint(provider, "openai-responses", "https://api.openai.com/v1", body_options=options)
    )


def chat(provider: str = "openai", **options: Any) -> OpenAIChatClient:
    return OpenAIChatClient(
        Endpoint(provider, "openai-chat", "https://api.openai.com/v1", body_options=options)
    )


def cache_markers(body: dict[str, Any]) -> list[str]:
    found = []
    for i, tool in enumerate(body.get("tools", [])):
        if "cache_control" in tool:
            found.append(f"tool{i}")
    for block in body.get("system", []):
        if "cache_control" in block:
            found.append("system")
    for m, msg in enumerate(body["messages"]):
        for b, block in enumerate(msg["content"]):
            if "cache_control" in block:
                found.append(f"msg{m}.{b}")
    return found


# Stability -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [anthropic, responses, chat])
def test_same_request_same_bytes_and_request_untouched(make: Any) -> None:
    client = make()
    model = "claude-opus-5-5" if isinstance(client, AnthropicClient) else "gpt-6.1-sol"
    req = request(model, cache_key="ws-1", params={"temperature": 0.5, "x_custom": [1, 2]})
    before = copy.deepcopy(req.messages)
    first = client.request_body(req)
    assert client.request_body(req) == first
    assert client.request_body(copy.deepcopy(req)) == first
    assert req.messages == before
    assert orjson.loads(first)["model"] == model


@pytest.mark.parametrize("make", [anthropic, responses, chat])
def test_tool_order_and_schemas_kept(make: Any) -> None:
    body = make().encode(request("claude-opus-5-5"))
    names = [t.get("name") or t["function"]["name"] for t in body["tools"]]
    assert names == ["read", "bash"]
    schema = body["tools"][1].get("input_schema") or body["tools"][1].get("parameters")
    schema = schema or body["tools"][1]["function"]["parameters"]
    assert schema == TOOLS[1].parameters


# Anthropic -----------------------------------------------------------------------------------


def test_anthropic_cache_breakpoints_on_tools_system_and_history_tail() -> None:
    body = anthropic().encode(request("claude-opus-5-5"))
    assert cache_markers(body) == ["tool1", "system", "msg2.2"]
    assert body["system"] == [
        {"type": "text", "text": "You are xum.", "cache_control": {"type": "ephemeral"}}
    ]
    assert cache_markers(anthropic().encode(request("claude-opus-5-5", cache=False))) == []


def test_anthropic_tool_results_share_one_user_turn_after_the_calls() -> None:
    body = anthropic().encode(request("claude-opus-5-5"))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    # ids from other wires are made acceptable, consistently on both sides
    assert assistant[2]["id"] == results[0]["tool_use_id"] == "call_1_a"
    assert assistant[2]["input"] == {"path": "a.py"}
    assert assistant[3]["input"] == {}  # invalid JSON: the model already heard about it
    assert results[1]["is_error"] is True and results[1]["content"] == "bad args"


def test_anthropic_thinking_replay_rules() -> None:
    same = anthropic().encode(request("claude-opus-5-5"))["messages"][1]["content"][0]
    assert same == {"type": "thinking", "thinking": "Plan.", "signature": "SIG"}
    # signed by another model: the API would reject it
    other = anthropic().encode(request("claude-sonnet-5-5"))["messages"][1]["content"]
    assert [b["type"] for b in other] == ["text", "tool_use", "tool_use"]
    # from another wire: dropped, the text stays
    foreign = anthropic().encode(request("claude-opus-5-5", messages=history("openai-responses")))
    assert [b["type"] for b in foreign["messages"][1]["content"]] == [
        "text",
        "tool_use",
        "tool_use",
    ]


def test_anthropic_redacted_thinking_goes_back_verbatim() -> None:
    msgs: list[Message] = [
        text_message("user", "q"),
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "", "wire": "anthropic",
             "state": {"model": "claude-opus-5-5", "redacted": "BLOB"}},
            {"type": "text", "text": "a"}]},
        text_message("user", "again"),
    ]  # fmt: skip
    body = anthropic().encode(request("claude-opus-5-5", messages=msgs))
    assert body["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "BLOB"}


@pytest.mark.parametrize(
    ("model", "level", "thinking", "effort"),
    [
        ("claude-opus-5-5", "medium", {"type": "adaptive", "display": "summarized"}, "medium"),
        ("claude-opus-5-5", "off", {"type": "adaptive", "display": "summarized"}, "low"),
        ("claude-opus-5-5", "max", {"type": "adaptive", "display": "summarized"}, "max"),
        ("claude-sonnet-5-5", "off", {"type": "disabled"}, None),
        ("claude-haiku-5-5", "xhigh", {"type": "adaptive", "display": "summarized"}, "xhigh"),
    ],
)
def test_anthropic_adaptive_thinking(
    model: str, level: ThinkingLevel, thinking: dict[str, Any], effort: str | None
) -> None:
    body = anthropic().encode(request(model, level))
    assert body["thinking"] == thinking
    assert body.get("output_config") == ({"effort": effort} if effort else None)
    assert body["max_tokens"] == 128_000


def test_anthropic_budget_thinking_for_older_models() -> None:
    msgs = [text_message("user", "hi")]
    body = anthropic().encode(request("claude-sonnet-4-5", "high", messages=msgs))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16_000}
    assert body["max_tokens"] > 16_000 and "output_config" not in body
    # max is clamped to the unknown-model range (off..high)
    assert (
        anthropic().encode(request("claude-sonnet-4-5", "max", messages=msgs))["thinking"][
            "budget_tokens"
        ]
        == 16_000
    )
    # an explicit output limit wins and the budget shrinks under it
    small = anthropic().encode(
        request("claude-sonnet-4-5", "high", messages=msgs, max_output_tokens=6_000)
    )
    assert small["max_tokens"] == 6_000 and small["thinking"]["budget_tokens"] == 6_000 - 1_024
    assert "thinking" not in anthropic().encode(request("claude-sonnet-4-5", "off", messages=msgs))


def test_anthropic_budget_model_mid_tool_loop_without_thinking_continues_without() -> None:
    # The last assistant turn came from another wire: no thinking block to continue from.
    body = anthropic().encode(
        request("claude-sonnet-4-5", "high", messages=history("openai-chat")[:3])
    )
    assert "thinking" not in body


def test_anthropic_forced_tool_choice() -> None:
    adaptive = anthropic().encode(request("claude-opus-5-5", tool_choice={"name": "bash"}))
    assert adaptive["tool_choice"] == {"type": "auto"}  # these models refuse forcing while thinking
    msgs = [text_message("user", "hi")]
    budget = anthropic().encode(
        request("claude-sonnet-4-5", "high", messages=msgs, tool_choice="required")
    )
    assert budget["tool_choice"] == {"type": "any"} and "thinking" not in budget


def test_anthropic_params_and_provider_options() -> None:
    # A model that is not Claude, on an Anthropic-compatible server: sampling passes through.
    client = anthropic("glm-gateway", metadata={"user_id": "u"}, model="EVIL", messages=[])
    body = client.encode(request("glm-5.3", params={
        "temperature": 1, "top_k": 5, "seed": 3, "max_output_tokens": 9_000, "custom_flag": True}))  # fmt: skip
    assert body["temperature"] == 1 and body["top_k"] == 5 and body["custom_flag"] is True
    assert "seed" not in body  # no Anthropic equivalent: dropped, not sent to fail
    assert body["max_tokens"] == 9_000
    assert body["metadata"] == {"user_id": "u"}
    assert body["model"] == "glm-5.3" and body["messages"]  # protected keys


def test_anthropic_no_empty_blocks() -> None:
    msgs: list[Message] = [
        text_message("user", "q"),
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},
        text_message("user", ""),
        text_message("user", "real"),
    ]
    body = anthropic().encode(request("claude-opus-5-5", messages=msgs))
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"},
                                     {"type": "text", "text": "real", "cache_control": {"type": "ephemeral"}}]}
    ]  # fmt: skip


# OpenAI Responses ----------------------------------------------------------------------------


def test_responses_body_shape() -> None:
    body = responses().encode(
        request("gpt-6.1-sol", "high", cache_key="ws-7", max_output_tokens=500)
    )
    assert body["instructions"] == "You are xum."
    assert body["store"] is False and body["stream"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["prompt_cache_key"] == "ws-7" and body["max_output_tokens"] == 500
    assert body["tools"][0] == {
        "type": "function", "name": "read", "description": "Read a file",
        "parameters": TOOLS[0].parameters, "strict": False,
    }  # fmt: skip


def test_responses_input_items_replay_state_without_ids() -> None:
    body = responses().encode(request("gpt-6.1-sol", messages=history("openai-responses")))
    items = body["input"]
    assert [i["type"] for i in items] == [
        "message", "reasoning", "message", "function_call", "function_call",
        "function_call_output", "function_call_output", "message",
    ]  # fmt: skip
    assert items[1] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "ENC",
    }
    assert items[3] == {
        "type": "function_call", "call_id": "call.1:a", "name": "read", "arguments": '{"path": "a.py"}',
    }  # fmt: skip
    assert items[4]["arguments"] == "{not json"  # replayed exactly as the model wrote it
    # With `store: false` the API keeps no items, so an item id in the input names nothing it
    # can find and is refused; `status` is an output field (docs/providers.md).
    assert all("id" not in i and "status" not in i for i in items)
    assert items[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Fix the bug."}],
    }
    assert items[2]["content"] == [{"type": "output_text", "text": "Looking."}]


def test_responses_drops_foreign_reasoning() -> None:
    items = responses().encode(request("gpt-6.1-sol", messages=history("anthropic")))["input"]
    assert "reasoning" not in [i["type"] for i in items]
    assert any(i.get("content") == [{"type": "output_text", "text": "Looking."}] for i in items)


@pytest.mark.parametrize(
    ("model", "level", "reasoning"),
    [
        ("gpt-6.1-sol", "off", {"effort": "low", "summary": "auto"}),  # Sol cannot turn it off
        ("gpt-6.1-sol", "max", {"effort": "max", "summary": "auto"}),
        ("gpt-6-luna", "off", {"effort": "none"}),
        ("gpt-6-astra", "xhigh", {"effort": "xhigh", "summary": "auto"}),
        ("some-local-model", "off", None),
        ("some-local-model", "low", {"effort": "low", "summary": "auto"}),
    ],
)
def test_responses_reasoning_effort(model: str, level: ThinkingLevel, reasoning: Any) -> None:
    body = responses().encode(request(model, level))
    assert body.get("reasoning") == reasoning
    assert ("include" in body) == (reasoning is not None)


def test_responses_params() -> None:
    body = responses(service_tier="flex").encode(
        request(
            "gpt-6.1-sol",
            params={"temperature": 0.2, "top_k": 3, "seed": 1, "extra": "x"},
            tool_choice={"name": "bash"},
        )
    )
    assert body["temperature"] == 0.2 and body["extra"] == "x" and body["service_tier"] == "flex"
    assert "top_k" not in body and "seed" not in body
    assert body["tool_choice"] == {"type": "function", "name": "bash"}


# Chat completions ----------------------------------------------------------------------------


def test_chat_messages() -> None:
    body = chat("deepseek").encode(request("deepseek-v4-pro", messages=history("openai-chat")))
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = msgs[2]
    assert assistant["content"] == "Looking."
    assert assistant["reasoning_content"] == "Plan."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call.1:a", "call_2"]
    assert assistant["tool_calls"][1]["function"] == {"name": "bash", "arguments": "{not json"}
    assert msgs[3] == {"role": "tool", "tool_call_id": "call.1:a", "content": "print(1)"}
    assert body["stream_options"] == {"include_usage": True}
    assert "reasoning_effort" not in body  # not a model known to take it
    assert "prompt_cache_key" not in body  # OpenAI's own field only


def test_chat_drops_foreign_reasoning_and_sends_null_content_for_pure_tool_calls() -> None:
    msgs = history("anthropic")
    msgs[1]["content"] = [p for p in msgs[1]["content"] if p["type"] != "text"]
    assistant = chat().encode(request("gpt-6.1-sol", messages=msgs))["messages"][2]
    assert assistant["content"] is None and "reasoning_content" not in assistant


@pytest.mark.parametrize(
    ("provider", "model", "level", "effort"),
    [
        ("openai", "gpt-6-luna", "high", "none"),  # tools on this route need reasoning off
        ("openai", "gpt-6.1-sol", "max", "max"),
        ("google", "gemini-3.1-pro-preview", "xhigh", "high"),
        ("google", "gemini-3.8-flash", "off", "none"),
        ("ollama", "qwen3-coder", "high", None),
    ],
)
def test_chat_reasoning_effort(
    provider: str, model: str, level: ThinkingLevel, effort: str | None
) -> None:
    assert chat(provider).encode(request(model, level)).get("reasoning_effort") == effort


def test_chat_output_limit_and_cache_key() -> None:
    openai = chat("openai").encode(request("gpt-6.1-sol", max_output_tokens=100, cache_key="k"))
    assert openai["max_completion_tokens"] == 100 and openai["prompt_cache_key"] == "k"
    local = chat("vllm").encode(
        request("m", params={"max_output_tokens": 50, "top_k": 4, "seed": 9})
    )
    assert local["max_tokens"] == 50 and local["top_k"] == 4 and local["seed"] == 9
