"""The messages and usage counts every layer shares: the session log stores them, the engine
builds them, the wire clients translate them, the UIs show them.

Messages are plain JSON-ready dicts (they are stored in the session log and sent to clients
as-is). A part may carry `wire` + `state`: opaque data that one wire format needs to replay the
message exactly (Anthropic thinking signatures, OpenAI Responses item ids and encrypted
reasoning). An encoder for a different wire drops that state, so switching a session to another
provider degrades cleanly instead of sending foreign data.

Usage convention: `input_tokens` is the whole prompt, cached or not; `cache_read_tokens` and
`cache_write_tokens` are the parts of it that were served from or written to the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from xum.core.images import ImagePart


class TextPart(TypedDict):
    type: Literal["text"]
    text: str
    wire: NotRequired[str]
    state: NotRequired[dict[str, Any]]


class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    text: str
    wire: NotRequired[str]
    state: NotRequired[dict[str, Any]]


class ToolCallPart(TypedDict):
    type: Literal["tool_call"]
    id: str
    name: str
    arguments: str  # the raw JSON text the model produced; may be invalid
    wire: NotRequired[str]
    state: NotRequired[dict[str, Any]]


class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    call_id: str
    name: str
    output: str
    is_error: NotRequired[bool]
    # Images the tool returned (`attach_file`, an MCP tool's image content): references to
    # the session's stored images, sent to a model that takes images (`xum.core.images`).
    images: NotRequired[list[ImagePart]]


class SearchHit(TypedDict):
    """One result of a web search, as shown: a title and a link (never the page's HTML)."""

    title: str
    url: str


class WebSearchPart(TypedDict):
    """A web search the provider ran itself inside the reply (Anthropic's web search tool,
    OpenAI Responses' `web_search`). Nothing for xum to execute: it records what was searched
    and what came back, for the transcript and the log. `state` keeps the provider's own blocks
    so a replay to the same wire sends them back unchanged; other wires drop the part."""

    type: Literal["web_search"]
    id: str
    query: str
    results: list[SearchHit]
    error: NotRequired[str]  # the provider's error code when the search failed
    wire: NotRequired[str]
    state: NotRequired[dict[str, Any]]


Part = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | WebSearchPart | ImagePart


class Message(TypedDict):
    """role `user` holds text (and images), `assistant` holds text/reasoning/tool calls, `tool`
    holds results."""

    role: Literal["user", "assistant", "tool"]
    content: list[Part]


def text_message(role: Literal["user", "assistant"], text: str) -> Message:
    return {"role": role, "content": [{"type": "text", "text": text}]}


@dataclass(slots=True)
class Usage:
    """Token counts of one reply (or a sum of them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(
            input_tokens=int(data.get("input_tokens", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            cache_read_tokens=int(data.get("cache_read_tokens", 0)),
            cache_write_tokens=int(data.get("cache_write_tokens", 0)),
            reasoning_tokens=int(data.get("reasoning_tokens", 0)),
        )
