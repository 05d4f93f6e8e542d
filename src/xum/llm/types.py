"""The provider-neutral vocabulary every wire format translates to and from: requests, tool
specs and stream events. Messages and usage (shared with the session log) are defined in
`xum.core.messages` and re-exported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# The shared message and usage types live in core (the session log stores them too).
from xum.core.images import ImageSource
from xum.core.messages import Message as Message
from xum.core.messages import Part as Part
from xum.core.messages import ReasoningPart as ReasoningPart
from xum.core.messages import SearchHit as SearchHit
from xum.core.messages import TextPart as TextPart
from xum.core.messages import ToolCallPart as ToolCallPart
from xum.core.messages import ToolResultPart as ToolResultPart
from xum.core.messages import Usage as Usage
from xum.core.messages import WebSearchPart as WebSearchPart
from xum.core.messages import text_message as text_message
from xum.llm.websearch import NativeSearch

Wire = Literal["anthropic", "openai-responses", "openai-chat"]
ThinkingLevel = Literal["off", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "low", "medium", "high", "xhigh", "max")
FinishReason = Literal["stop", "tool_calls", "length", "refusal", "content_filter", "other"]


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
    # The provider's own server-side web search, when config enables it and the route's API has
    # it (xum.llm.websearch); the wire client adds the provider's tool to the request.
    web_search: NativeSearch | None = None
    # Where the encoders read the bytes of the images the messages refer to; None when the
    # model does not take images (each image is then sent as a short text placeholder).
    images: ImageSource | None = None


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
class Stalled:
    """Stream event, advisory: the reply has sent nothing that counts as progress (a whole
    event) for `silent_s` seconds, a quarter of the idle limit `idle_s`; the attempt ends when
    the silence reaches `idle_s`. `began`: whether any of the reply had arrived (else the
    silence follows the response headers). Sent once per silence."""

    silent_s: float
    idle_s: float
    began: bool


@dataclass(slots=True)
class Finish:
    """Stream event, always the last: the whole reply and why it ended."""

    reason: FinishReason
    message: Message  # the assembled assistant message, replay state included
    usage: Usage
    raw_reason: str = ""  # the provider's own stop reason, for the log
    response_id: str | None = None
    # True only when the provider reported the reply's token usage. Without it `usage` is all
    # zeros, which must not be priced as a free reply: its cost is unknown.
    usage_reported: bool = False
    # What the provider said about why it stopped, when it says more than the reason (Anthropic's
    # `stop_details` of a refusal: `category`, `explanation`).
    stop_details: dict[str, Any] | None = None


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageUpdate
    | Retrying
    | Stalled
    | Finish
)
