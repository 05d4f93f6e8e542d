"""The three wire formats, one codec each, looked up by wire name or request path."""

from __future__ import annotations

from xum.testing.fakellm.script import Wire
from xum.testing.fakellm.wires.anthropic import AnthropicCodec
from xum.testing.fakellm.wires.common import WireCodec
from xum.testing.fakellm.wires.openai_chat import ChatCodec
from xum.testing.fakellm.wires.openai_responses import ResponsesCodec

CODECS: dict[Wire, WireCodec] = {
    "anthropic": AnthropicCodec(),
    "openai-responses": ResponsesCodec(),
    "openai-chat": ChatCodec(),
}

ROUTES: dict[str, Wire] = {
    "/v1/messages": "anthropic",
    "/v1/responses": "openai-responses",
    "/v1/chat/completions": "openai-chat",
}

__all__ = ["CODECS", "ROUTES", "WireCodec"]
