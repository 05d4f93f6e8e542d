"""The one interface the engine talks to, and the factory that picks a wire client."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Protocol

from xum.llm.endpoint import Endpoint
from xum.llm.errors import LLMError
from xum.llm.params import Withheld
from xum.llm.retry import RetryPolicy
from xum.llm.types import Finish, LLMRequest, StreamEvent

if TYPE_CHECKING:
    import httpx

    from xum.llm.limits import ReplyLimits


class LLMClient(Protocol):
    endpoint: Endpoint

    def stream(
        self, request: LLMRequest, *, stream: bool = True
    ) -> AsyncGenerator[StreamEvent, None]:
        """Events for one reply, ending with `Finish`; raises `LLMError` on failure. Closing the
        generator (`aclose()`) or cancelling the task reading it ends the request at once."""
        ...

    async def complete(self, request: LLMRequest, *, stream: bool = True) -> Finish: ...

    def request_body(self, request: LLMRequest, *, stream: bool = True) -> bytes:
        """The exact bytes `stream` would POST (for cache-stability checks and logs)."""
        ...

    def withheld_params(self, request: LLMRequest) -> list[Withheld]:
        """The known `modelParameters` of `request` that are not sent, each with the reason."""
        ...

    async def aclose(self) -> None: ...


def open_client(
    endpoint: Endpoint,
    *,
    retry: RetryPolicy | None = None,
    limits: ReplyLimits | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> LLMClient:
    """A client for `endpoint.wire`. It holds one keep-alive HTTP connection pool: reuse it for
    every request to that endpoint and `aclose()` it when done. `limits` (default: the
    endpoint's) bound each reply; `retry` (default: from those limits) paces retries."""
    if endpoint.wire == "anthropic":
        from xum.llm.anthropic import AnthropicClient

        return AnthropicClient(endpoint, retry=retry, limits=limits, transport=transport)
    if endpoint.wire == "openai-responses":
        from xum.llm.openai_responses import OpenAIResponsesClient

        return OpenAIResponsesClient(endpoint, retry=retry, limits=limits, transport=transport)
    if endpoint.wire == "openai-chat":
        from xum.llm.openai_chat import OpenAIChatClient

        return OpenAIChatClient(endpoint, retry=retry, limits=limits, transport=transport)
    raise LLMError(
        "config",
        f"provider {endpoint.provider!r} uses an unknown wire format {endpoint.wire!r}",
        provider=endpoint.provider,
        hint="use anthropic-messages, openai-responses or openai-compatible as providerType",
    )
