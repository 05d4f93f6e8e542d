"""The provider-neutral vocabulary every wire format translates to and from.

Messages are plain JSON-ready dicts (they are stored in the session log and sent to clients
as-is). A part may carry `wire` + `state`: opaque data that one wire format needs to replay the
message exactly (Anthropic thinking signatures, OpenAI Responses item ids and encrypted
reasoning). An encoder for a different wire drops that state, so switching a session to another
provider degrades cleanly instead of sending foreign data.

Usage convention: `input_tokens` is the whole prompt, cached or not; `cache_read_tokens` and
`cache_write_tokens` are the parts of it that were served from or written to the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

Wire = Literal["anthropic", "openai-responses", "openai-chat"]
ThinkingLevel = Literal["off", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "low", "medium", "high", "xhigh", "max")
FinishReason = Literal["stop", "tool_calls", "length", "refusal", "content_filter", "other"]


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


Part = TextPart | ReasoningPart | ToolCallPart | ToolResultPart


class Message(TypedDict):
    """role `user` holds text, `assistant` holds text/reasoning/tool calls, `tool` holds results."""

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


@dataclass(slots=True)
class ToolSpec:
    """A tool as a model is offered it."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the input object


ToolChoice = Literal["auto", "required", "none"] | dict[str, str]  # {"name": "<tool>"}


@dataclass(slots=True)
class LLMRequest:
    """One request in the provider-neutral form every wire client encodes."""

    model: str  # the provider's own model id (no "provider:" prefix)
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    thinking: ThinkingLevel = "off"
    max_output_tokens: int | None = None
    tool_choice: ToolChoice | None = None
    cache_key: str | None = None  # OpenAI `prompt_cache_key`: stable per workspace
    params: dict[str, Any] = field(default_factory=dict)  # resolved `modelParameters`
    cache: bool = True  # Anthropic: place cache breakpoints on the prefix and the history tail


# Stream events -------------------------------------------------------------------------------


@dataclass(slots=True)
class TextDelta:
    """Stream event: more assistant text."""

    text: str


@dataclass(slots=True)
class ReasoningDelta:
    """Stream event: more reasoning (thinking) text."""

    text: str


@dataclass(slots=True)
class ToolCallStart:
    """Stream event: a tool call begins."""

    index: int
    id: str
    name: str


@dataclass(slots=True)
class ToolCallDelta:
    """Stream event: more of a tool call's JSON arguments."""

    index: int
    arguments: str


@dataclass(slots=True)
class ToolCallEnd:
    """Stream event: a tool call's arguments are complete."""

    index: int


@dataclass(slots=True)
class UsageUpdate:
    """Stream event: the usage so far (a snapshot, not an increment)."""

    usage: Usage


@dataclass(slots=True)
class Retrying:
    """The client will retry after `delay_s`. With `discard_partial`, deltas already emitted for
    this request must be thrown away: the retry streams the reply again from the start."""

    attempt: int
    delay_s: float
    reason: str
    discard_partial: bool


@dataclass(slots=True)
class Finish:
    """Stream event, always the last: the whole reply and why it ended."""

    reason: FinishReason
    message: Message  # the assembled assistant message, replay state included
    usage: Usage
    raw_reason: str = ""  # the provider's own stop reason, for the log
    response_id: str | None = None


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageUpdate
    | Retrying
    | Finish
)
