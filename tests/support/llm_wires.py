"""Helpers for the LLM client tests on each wire: requests, clients, collected streams."""

from __future__ import annotations

from typing import Any

from xum.llm.client import LLMClient, open_client
from xum.llm.endpoint import Endpoint
from xum.llm.retry import RetryPolicy
from xum.llm.types import (
    LLMRequest,
    Message,
    StreamEvent,
    TextDelta,
    ThinkingLevel,
    ToolSpec,
    Wire,
    text_message,
)
from xum.testing.fakellm import FakeLLM

MODEL = {
    "anthropic": "claude-opus-5-5",
    "openai-responses": "gpt-6.1-sol",
    "openai-chat": "gpt-6.1-sol",
}

TOOLS = [
    ToolSpec(
        "bash", "Run a script", {"type": "object", "properties": {"script": {"type": "string"}}}
    )
]

KEY = "sk-test-SECRETKEY123"


class Sleeps:
    """An injected sleep: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def make_client(
    server: FakeLLM,
    wire: Wire,
    sleeps: Sleeps | None = None,
    *,
    base_url: str | None = None,
    **retry: Any,
) -> LLMClient:
    endpoint = Endpoint(
        provider="anthropic" if wire == "anthropic" else "openai",
        wire=wire,
        base_url=base_url or server.base_url(),
        api_key=KEY,
        key_source="env:TEST_KEY",
        auth_style="x-api-key" if wire == "anthropic" else "bearer",
    )
    policy = RetryPolicy(
        base_delay_s=retry.pop("base_delay_s", 0.5), jitter=0.0, sleep=sleeps or Sleeps(), **retry
    )
    return open_client(endpoint, retry=policy)


def make_request(
    wire: Wire, messages: list[Message] | None = None, thinking: ThinkingLevel = "high", **kw: Any
) -> LLMRequest:
    return LLMRequest(
        model=MODEL[wire],
        system="You are a test.",
        messages=messages or [text_message("user", "hello")],
        tools=TOOLS,
        thinking=thinking,
        cache_key="ws-test",
        **kw,
    )


async def collect(
    client: LLMClient, request: LLMRequest, *, stream: bool = True
) -> list[StreamEvent]:
    return [event async for event in client.stream(request, stream=stream)]


def texts(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))
