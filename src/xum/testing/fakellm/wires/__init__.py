"""The wire formats, one codec each, looked up by wire name or request path (`route`)."""

from __future__ import annotations

from xum.testing.fakellm.script import Wire
from xum.testing.fakellm.wires.anthropic import AnthropicCodec
from xum.testing.fakellm.wires.common import WireCodec
from xum.testing.fakellm.wires.gemini import GeminiCodec, parse_path
from xum.testing.fakellm.wires.openai_chat import ChatCodec
from xum.testing.fakellm.wires.openai_responses import ResponsesCodec

CODECS: dict[Wire, WireCodec] = {
    "anthropic": AnthropicCodec(),
    "openai-responses": ResponsesCodec(),
    "openai-chat": ChatCodec(),
    "gemini": GeminiCodec(),
}

ROUTES: dict[str, Wire] = {
    "/v1/messages": "anthropic",
    "/v1/responses": "openai-responses",
    "/v1/chat/completions": "openai-chat",
}


def route(path: str) -> Wire | None:
    """The wire of a model call's path: a fixed path, or Gemini's `/v1beta/models/{m}:{method}`."""
    return ROUTES.get(path) or ("gemini" if parse_path(path) is not None else None)


__all__ = ["CODECS", "ROUTES", "WireCodec", "route"]
