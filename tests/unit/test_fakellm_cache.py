"""Prompt-cache accounting: Anthropic breakpoints and OpenAI automatic prefix caching, as the
client sees it on the wire and as the recording reports it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

# One client per module: creating an httpx.Client costs ~20 ms (its TLS context).
HTTP = httpx.Client(timeout=10)

EPHEMERAL = {"type": "ephemeral"}
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell script. " * 20,
        "input_schema": {"type": "object", "properties": {"script": {"type": "string"}}},
    }
]


def anthropic(
    server: FakeLLM,
    system: str,
    messages: list[dict[str, Any]],
    *,
    model: str = "claude-sonnet-4-5",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    server.script(fakellm.text("ok"))
    body = {
        "model": model,
        "max_tokens": 100,
        "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
        "messages": messages,
        "tools": tools if tools is not None else TOOLS,
    }
    r = HTTP.post(server.base_url() + "/messages", json=body)
    assert r.status_code == 200, r.text
    usage: dict[str, Any] = r.json()["usage"]
    return usage


def user(text: str, *, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = EPHEMERAL
    return {"role": "user", "content": [block]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


SYSTEM = "You are a careful coding agent. " * 40


# Anthropic ------------------------------------------------------------------------------------


def test_anthropic_second_request_reads_the_system_prefix(fake_llm: FakeLLM) -> None:
    first = anthropic(fake_llm, SYSTEM, [user("one")])
    second = anthropic(fake_llm, SYSTEM, [user("two, a different question")])
    r1, r2 = (r.cache for r in fake_llm.requests)
    assert r1 is not None and r2 is not None
    prefix = r1.write_tokens
    assert prefix > 0 and first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] == prefix
    assert second["cache_read_input_tokens"] == prefix
    assert second["cache_creation_input_tokens"] == 0
    # Anthropic's input_tokens excludes the cached part.
    assert second["input_tokens"] == r2.prompt_tokens - prefix == r2.uncached_tokens
    assert first["cache_creation"] == {
        "ephemeral_5m_input_tokens": prefix,
        "ephemeral_1h_input_tokens": 0,
    }


def test_anthropic_changed_system_prompt_misses(fake_llm: FakeLLM) -> None:
    anthropic(fake_llm, SYSTEM, [user("one")])
    usage = anthropic(fake_llm, SYSTEM + " Today is Tuesday.", [user("one")])
    assert usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] > 0
    rec = fake_llm.requests[1].cache
    assert rec is not None and not rec.hit
    # Only the tools (before the system prompt) were shared with the first request.
    assert 0 < rec.matched_prefix_tokens < rec.write_tokens


def test_anthropic_other_model_has_its_own_cache(fake_llm: FakeLLM) -> None:
    anthropic(fake_llm, SYSTEM, [user("one")])
    usage = anthropic(fake_llm, SYSTEM, [user("one")], model="claude-haiku-4-5")
    assert usage["cache_read_input_tokens"] == 0


def test_anthropic_conversation_tail_breakpoint_hits_through_lookback(fake_llm: FakeLLM) -> None:
    turn1 = [user("first question", cached=True)]
    anthropic(fake_llm, SYSTEM, turn1)
    # The next turn moves the tail breakpoint forward; the previous tail is found by lookback.
    turn2 = [user("first question"), assistant("an answer"), user("follow-up", cached=True)]
    usage = anthropic(fake_llm, SYSTEM, turn2)
    c1, c2 = (r.cache for r in fake_llm.requests)
    assert c1 is not None and c2 is not None
    assert usage["cache_read_input_tokens"] == c1.prompt_tokens
    assert usage["cache_creation_input_tokens"] == c2.prompt_tokens - c1.prompt_tokens
    assert usage["input_tokens"] == 0
    assert c2.matched_prefix_tokens == c1.prompt_tokens


def test_anthropic_lookback_is_limited_to_twenty_blocks(fake_llm: FakeLLM) -> None:
    anthropic(fake_llm, SYSTEM, [user("start", cached=True)])
    history = [user("start")]
    for i in range(11):  # 22 new blocks: the old tail is out of reach of the new breakpoint
        history += [assistant(f"a{i}"), user(f"u{i}")]
    history[-1] = user("u10", cached=True)
    usage = anthropic(fake_llm, SYSTEM, history)
    first = fake_llm.requests[0].cache
    system_prefix = fake_llm.requests[1].cache
    assert first is not None and system_prefix is not None
    # Read: only the system breakpoint (tools + system); the old tail prefix is not found.
    assert 0 < usage["cache_read_input_tokens"] < first.prompt_tokens
    assert system_prefix.matched_prefix_tokens == first.prompt_tokens


def test_anthropic_moving_a_breakpoint_does_not_change_the_prefix(fake_llm: FakeLLM) -> None:
    anthropic(fake_llm, SYSTEM, [user("q", cached=True)])
    # Same content, breakpoint removed from the message: the system prefix still matches, and
    # the cache_control marker itself is not part of the content.
    anthropic(fake_llm, SYSTEM, [user("q")])
    second = fake_llm.requests[1].cache
    first = fake_llm.requests[0].cache
    assert second is not None and first is not None
    assert second.matched_prefix_tokens == first.prompt_tokens


def test_anthropic_more_than_four_breakpoints_is_rejected(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("never sent"))
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}],
        "messages": [user(f"m{i}", cached=True) for i in range(4)],
    }
    r = HTTP.post(fake_llm.base_url() + "/messages", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert "maximum of 4 blocks with cache_control" in r.json()["error"]["message"]
    assert fake_llm.replies_left == 1  # a rejected request does not consume the script


def test_anthropic_minimum_cacheable_length(fake_llm: FakeLLM) -> None:
    fake_llm.cache_config.anthropic_min_tokens = 10_000
    anthropic(fake_llm, SYSTEM, [user("one")])
    usage = anthropic(fake_llm, SYSTEM, [user("one")])
    assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0


def test_anthropic_one_hour_ttl_is_reported_separately(fake_llm: FakeLLM) -> None:
    tools = [{**TOOLS[0], "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    usage = anthropic(fake_llm, SYSTEM, [user("one")], tools=tools)
    split = usage["cache_creation"]
    assert split["ephemeral_1h_input_tokens"] > 0
    assert split["ephemeral_5m_input_tokens"] > 0
    total = split["ephemeral_1h_input_tokens"] + split["ephemeral_5m_input_tokens"]
    assert total == usage["cache_creation_input_tokens"]


def test_anthropic_top_level_cache_control_caches_everything(fake_llm: FakeLLM) -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "cache_control": EPHEMERAL,
        "messages": [user("hello " * 50)],
    }
    fake_llm.script(fakellm.text("a"), fakellm.text("b"))
    HTTP.post(fake_llm.base_url() + "/messages", json=body)
    usage = HTTP.post(fake_llm.base_url() + "/messages", json=body).json()["usage"]
    assert usage["input_tokens"] == 0 and usage["cache_read_input_tokens"] > 0


# OpenAI ---------------------------------------------------------------------------------------

LONG = "Stable project instructions, line by line. " * 200  # ~2200 tokens


def responses(server: FakeLLM, instructions: str, question: str, **extra: Any) -> dict[str, Any]:
    server.script(fakellm.text("ok"))
    body = {"model": "gpt-5", "instructions": instructions, "input": question, **extra}
    usage: dict[str, Any] = HTTP.post(server.base_url() + "/responses", json=body).json()["usage"]
    return usage


def test_openai_minimum_length_rule(fake_llm: FakeLLM) -> None:
    responses(fake_llm, "short instructions", "q1")
    short = responses(fake_llm, "short instructions", "q2")
    assert short["input_tokens_details"]["cached_tokens"] == 0  # under 1024 tokens: no caching

    responses(fake_llm, LONG, "q1")
    usage = responses(fake_llm, LONG, "q2")
    shared = fake_llm.requests[-1].cache
    assert shared is not None and shared.matched_prefix_tokens > 1024
    cached = usage["input_tokens_details"]["cached_tokens"]
    assert cached == 1024 + (shared.matched_prefix_tokens - 1024) // 128 * 128
    # OpenAI's input_tokens includes the cached part.
    assert usage["input_tokens"] == shared.prompt_tokens > cached


def test_openai_lowered_minimum_lets_short_prompts_hit(fake_llm: FakeLLM) -> None:
    fake_llm.cache_config.openai_min_tokens = 0
    fake_llm.cache_config.openai_increment = 1
    responses(fake_llm, "short instructions", "q1")
    usage = responses(fake_llm, "short instructions", "q2")
    assert usage["input_tokens_details"]["cached_tokens"] == fakellm.count_tokens(
        b"instructions\0short instructions"
    )
    changed = responses(fake_llm, "other instructions", "q2")
    assert changed["input_tokens_details"]["cached_tokens"] == 0


def test_openai_prompt_cache_key_partitions_the_cache(fake_llm: FakeLLM) -> None:
    responses(fake_llm, LONG, "q1", prompt_cache_key="workspace-a")
    other = responses(fake_llm, LONG, "q2", prompt_cache_key="workspace-b")
    same = responses(fake_llm, LONG, "q2", prompt_cache_key="workspace-a")
    assert other["input_tokens_details"]["cached_tokens"] == 0
    assert same["input_tokens_details"]["cached_tokens"] >= 1024


@pytest.mark.parametrize("stream", [False, True])
def test_chat_growing_conversation_reports_cached_prompt_tokens(
    fake_llm: FakeLLM, stream: bool
) -> None:
    fake_llm.cache_config.openai_min_tokens = 0
    fake_llm.cache_config.openai_increment = 1
    messages: list[dict[str, Any]] = [{"role": "system", "content": LONG}]
    cached: list[int] = []
    for turn in range(3):
        messages.append({"role": "user", "content": f"question {turn}"})
        fake_llm.script(fakellm.text(f"answer {turn}"))
        body: dict[str, Any] = {"model": "gpt-5", "messages": messages, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        r = HTTP.post(fake_llm.base_url() + "/chat/completions", json=body)
        if stream:
            frames = [f for f in r.text.split("\n\n") if f.startswith("data: {")]
            usage = httpx.Response(200, content=frames[-1][6:]).json()["usage"]
        else:
            usage = r.json()["usage"]
        rec = fake_llm.requests[-1].cache
        assert rec is not None and usage["prompt_tokens"] == rec.prompt_tokens
        cached.append(usage["prompt_tokens_details"]["cached_tokens"])
        messages.append({"role": "assistant", "content": f"answer {turn}"})
    previous = [r.cache.prompt_tokens for r in fake_llm.requests]  # type: ignore[union-attr]
    # Each request is a prefix of the next: everything the previous one sent is cached.
    assert cached == [0, previous[0], previous[1]]
