"""Which `modelParameters` each wire, provider and model gets, and what is reported as left out.
The rules come from the providers' API references (sources in `xum.llm.params`)."""

from __future__ import annotations

from typing import Any

import pytest

from xum.llm.anthropic import AnthropicClient
from xum.llm.endpoint import Endpoint
from xum.llm.openai_chat import OpenAIChatClient
from xum.llm.params import withheld_params
from xum.llm.types import LLMRequest, ThinkingLevel, Wire, text_message

SAMPLING = {"temperature": 0.3, "top_p": 0.9, "top_k": 40}


def keys_left_out(
    wire: Wire, provider: str, model: str, params: dict[str, Any], **kw: Any
) -> set[str]:
    return {
        w.key
        for w in withheld_params(wire, provider, model, params, thinking=kw.get("thinking", False))
    }


def request(model: str, params: dict[str, Any], thinking: ThinkingLevel = "off") -> LLMRequest:
    return LLMRequest(model, "sys", [text_message("user", "hi")], thinking=thinking, params=params)


def test_top_k_goes_only_to_chat_servers_that_take_it() -> None:
    # Field report, wires 3: a "*" entry sent top_k to OpenAI's Chat API, which has none.
    params = {**SAMPLING, "seed": 1}
    for provider in ("openai", "ollama", "google", "xai", "deepseek", "moonshotai", "zai"):
        assert keys_left_out("openai-chat", provider, "m", params) == {"top_k"}, provider
    assert keys_left_out("openai-chat", "openrouter", "m", params) == set()
    assert keys_left_out("openai-chat", "local-vllm", "m", params) == set()  # a custom server
    body = OpenAIChatClient(Endpoint("openai", "openai-chat", "http://x/v1")).encode(
        request("gpt-6.1-sol", params)
    )
    assert "top_k" not in body and body["temperature"] == 0.3 and body["seed"] == 1


def test_the_responses_wire_takes_temperature_and_top_p_only() -> None:
    params = {**SAMPLING, "seed": 1, "frequency_penalty": 0.1, "custom": True}
    assert keys_left_out("openai-responses", "openai", "gpt-6.1-sol", params) == {
        "top_k", "seed", "frequency_penalty"
    }  # fmt: skip


@pytest.mark.parametrize(
    "model", ["claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8", "claude-mythos-preview"]
)
def test_the_newest_claude_models_get_no_sampling_parameters(model: str) -> None:
    left = withheld_params("anthropic", "anthropic", model, SAMPLING, thinking=False)
    assert {w.key for w in left} == {"temperature", "top_p", "top_k"}
    assert all("does not accept sampling parameters" in w.reason for w in left)
    body = AnthropicClient(Endpoint("anthropic", "anthropic", "http://x/v1")).encode(
        request(model, SAMPLING)
    )
    assert not {"temperature", "top_p", "top_k"} & set(body)


def test_extended_thinking_rules_on_older_claude_models() -> None:
    client = AnthropicClient(Endpoint("anthropic", "anthropic", "http://x/v1"))
    thinking = request("claude-sonnet-4-5", {"temperature": 0.3, "top_p": 0.5, "top_k": 5}, "high")
    assert client.encode(thinking)["thinking"]["type"] == "enabled"
    assert {w.key for w in client.withheld_params(thinking)} == {"temperature", "top_p", "top_k"}
    ok = request("claude-sonnet-4-5", {"temperature": 1, "top_p": 0.97}, "high")
    body = client.encode(ok)
    assert body["temperature"] == 1 and "top_p" not in body  # 4.x: one of the two, not both
    plain = request("claude-sonnet-4-5", {"temperature": 0.3, "top_k": 5})
    body = client.encode(plain)
    assert body["temperature"] == 0.3 and body["top_k"] == 5 and not client.withheld_params(plain)
    older = request("claude-3-7-sonnet", {"temperature": 0.3, "top_p": 0.9})
    assert not client.withheld_params(older)  # not a model id the version rules recognize


def test_nothing_is_reported_when_nothing_is_left_out() -> None:
    assert (
        withheld_params("openai-chat", "openai", "m", {"temperature": 0.1, "x": 1}, thinking=False)
        == []
    )
    assert (
        withheld_params(
            "anthropic", "anthropic", "claude-opus-5-5", {"max_output_tokens": 9}, thinking=True
        )
        == []
    )
