"""Anthropic Messages API: `POST {base_url}/messages`, streamed as server-sent events."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from xum.core.images import ImageSource
from xum.llm.catalog import anthropic_thinking_style, default_max_output_tokens, lookup
from xum.llm.common import (
    MessageBuilder,
    dumps,
    finish_reason,
    loads,
    max_output,
    own_state,
    parse_arguments,
)
from xum.llm.errors import ErrorContext, classify, invalid_response, network_error, payload_fields
from xum.llm.http import WireClient
from xum.llm.images import anthropic_block
from xum.llm.params import SAMPLING_PARAMS, Withheld, apply_params, withheld_params
from xum.llm.thinking import (
    ANTHROPIC_ANSWER_ROOM,
    ANTHROPIC_BUDGETS,
    ANTHROPIC_MIN_BUDGET,
    clamp_thinking,
)
from xum.llm.types import (
    Finish,
    FinishReason,
    LLMRequest,
    Message,
    ReasoningDelta,
    SearchHit,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageUpdate,
)
from xum.llm.websearch import NativeSearch

API_VERSION = "2023-06-01"
WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
DEFAULT_MAX_TOKENS = 32_000  # for an Anthropic-wire model the catalog knows nothing about
_EPHEMERAL = {"type": "ephemeral"}
_CACHEABLE = frozenset({"text", "tool_use", "tool_result", "image", "document"})
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "other",  # a provider-side tool loop paused; the turn is not done
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


class _Plan(NamedTuple):
    """How a request goes out: thinking, effort, the output limit and the tool choice."""

    thinking: dict[str, Any] | None
    effort: str | None
    max_tokens: int
    tool_choice: Any


def tool_id(raw: str) -> str:
    """Anthropic ids must match `[a-zA-Z0-9_-]+`; ids minted by other wires may not."""
    return _BAD_ID_CHARS.sub("_", raw) or "call"


class AnthropicClient(WireClient):
    wire = "anthropic"
    path = "messages"

    def wire_headers(self) -> dict[str, str]:
        return {"anthropic-version": API_VERSION}

    def encode(self, request: LLMRequest, *, stream: bool = True) -> dict[str, Any]:
        messages = encode_messages(request.messages, request.model, request.images)
        plan = self._plan(request, messages)
        body: dict[str, Any] = {"model": request.model, "max_tokens": plan.max_tokens}
        if stream:
            body["stream"] = True
        if request.system:
            system: dict[str, Any] = {"type": "text", "text": request.system}
            if request.cache:
                system["cache_control"] = _EPHEMERAL
            body["system"] = [system]
        if request.cache:
            _mark_history_tail(messages)
        body["messages"] = messages
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        if request.web_search is not None:
            tools.append(server_search_tool(request.web_search))
        if tools:
            if request.cache:
                tools[-1]["cache_control"] = _EPHEMERAL
            body["tools"] = tools
            if request.tools and plan.tool_choice is not None:
                body["tool_choice"] = _tool_choice(plan.tool_choice)
        if plan.thinking is not None:
            body["thinking"] = plan.thinking
        if plan.effort is not None:
            body["output_config"] = {"effort": plan.effort}
        withheld = self._withheld(request, plan)
        apply_params(body, request.params, withheld, self.endpoint.body_options)
        return body

    def withheld_params(self, request: LLMRequest) -> list[Withheld]:
        if not any(request.params.get(k) is not None for k in SAMPLING_PARAMS):
            return self._withheld(request, None)  # no thinking rule can apply
        return self._withheld(
            request,
            self._plan(request, encode_messages(request.messages, request.model, request.images)),
        )

    def _withheld(self, request: LLMRequest, plan: _Plan | None) -> list[Withheld]:
        config = plan.thinking if plan is not None else None
        thinking = config is not None and config.get("type") != "disabled"
        return withheld_params(
            "anthropic", self.endpoint.provider, request.model, request.params, thinking=thinking
        )

    def _plan(self, request: LLMRequest, messages: list[dict[str, Any]]) -> _Plan:
        """Thinking, effort, the output limit and the tool choice this request goes out with."""
        provider = self.endpoint.provider
        model = request.model
        style = anthropic_thinking_style(model)
        level = clamp_thinking(request.thinking, provider, model)
        explicit_max = max_output(request.max_output_tokens, request.params)
        default_max = default_max_output_tokens(provider, model) or DEFAULT_MAX_TOKENS
        info = lookup(provider, model)
        can_disable = info is None or info.thinking_min == "off"

        tool_choice = request.tool_choice
        forced = tool_choice is not None and tool_choice not in ("auto", "none")
        thinking: dict[str, Any] | None = None
        effort: str | None = None
        max_tokens = explicit_max or default_max
        if style == "adaptive":
            if level == "off" and can_disable:
                thinking = {"type": "disabled"}
            else:
                # Adaptive models reject a forced tool choice while thinking; keep thinking.
                thinking = {"type": "adaptive", "display": "summarized"}
                effort = level if level != "off" else "low"
                if forced:
                    tool_choice = "auto"
        elif level != "off" and not forced and not _mid_loop_without_thinking(messages):
            # Fixed budgets cannot be combined with a forced tool, and a tool loop whose last
            # assistant turn has no thinking block (another wire or model produced it) must
            # continue without thinking.
            budget = ANTHROPIC_BUDGETS[level]
            if explicit_max:
                budget = min(budget, explicit_max - ANTHROPIC_MIN_BUDGET)
            else:
                max_tokens = max(default_max, budget + ANTHROPIC_ANSWER_ROOM)
            if budget >= ANTHROPIC_MIN_BUDGET:
                thinking = {"type": "enabled", "budget_tokens": budget}
        return _Plan(thinking, effort, max_tokens, tool_choice)

    def new_decoder(self, request: LLMRequest) -> AnthropicDecoder:
        return AnthropicDecoder(self.error_context(request.model), request.model)

    def body_frames(self, obj: Any) -> list[tuple[str, Any]]:
        if not isinstance(obj, dict):
            return []
        head = {k: v for k, v in obj.items() if k != "content"}
        frames: list[tuple[str, Any]] = [
            ("message_start", {"type": "message_start", "message": {**head, "content": []}})
        ]
        for index, block in enumerate(obj.get("content") or []):
            frames.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            )
            frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        delta = {
            "stop_reason": obj.get("stop_reason"),
            "stop_sequence": obj.get("stop_sequence"),
            "stop_details": obj.get("stop_details"),
        }
        frames.append(
            ("message_delta", {"type": "message_delta", "delta": delta, "usage": obj.get("usage")})
        )
        frames.append(("message_stop", {"type": "message_stop"}))
        return frames


# Encoding ------------------------------------------------------------------------------------


def encode_messages(
    messages: Sequence[Message], model: str, images: ImageSource | None = None
) -> list[dict[str, Any]]:
    """History in Anthropic's shape: alternating user/assistant turns, where all tool results
    of one step sit together in the user turn right after the assistant's tool calls."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = (
            _assistant_blocks(message, model)
            if role == "assistant"
            else _user_blocks(message, images)
        )
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def server_search_tool(search: NativeSearch) -> dict[str, Any]:
    """Anthropic's server-side web search tool, as the request's `tools` lists it."""
    tool: dict[str, Any] = {
        "type": WEB_SEARCH_TOOL_TYPE,
        "name": "web_search",
        "max_uses": search.max_uses,
    }
    if search.allowed_domains:
        tool["allowed_domains"] = list(search.allowed_domains)
    return tool


def _assistant_blocks(message: Message, model: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message["content"]:
        if part["type"] == "text":
            if part["text"].strip():
                text: dict[str, Any] = {"type": "text", "text": part["text"]}
                cited = own_state(part, "anthropic")
                if cited and cited.get("citations"):
                    text["citations"] = cited["citations"]
                blocks.append(text)
        elif part["type"] == "web_search":
            # The provider's own blocks go back as they came (the results' encrypted content
            # is what lets the model cite them). Not resent: another wire's search, and a
            # search without its result (a paused reply), since the API takes a
            # `server_tool_use` block only together with the result that answers it.
            state = own_state(part, "anthropic")
            if (
                state is not None
                and isinstance(state.get("use"), dict)
                and isinstance(state.get("result"), dict)
            ):
                blocks.extend((state["use"], state["result"]))
        elif part["type"] == "tool_call":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id(part["id"]),
                    "name": part["name"],
                    "input": parse_arguments(part["arguments"]),
                }
            )
        elif part["type"] == "reasoning":
            state = own_state(part, "anthropic")
            # Thinking blocks are bound to the model that wrote them; another model rejects
            # them, so they are dropped when the session switched models.
            if state is None or state.get("model", model) != model:
                continue
            if "redacted" in state:
                blocks.append({"type": "redacted_thinking", "data": state["redacted"]})
            elif state.get("signature"):
                blocks.append(
                    {"type": "thinking", "thinking": part["text"], "signature": state["signature"]}
                )
    return blocks


def _user_blocks(message: Message, images: ImageSource | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message["content"]:
        if part["type"] == "text":
            if part["text"]:
                blocks.append({"type": "text", "text": part["text"]})
        elif part["type"] == "image":
            blocks.append(anthropic_block(part, images))
        elif part["type"] == "tool_result":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id(part["call_id"])}
            shown = part.get("images") or []
            if shown:
                # A tool result's content may mix text and image blocks.
                content: list[dict[str, Any]] = []
                if part["output"]:
                    content.append({"type": "text", "text": part["output"]})
                content.extend(anthropic_block(image, images) for image in shown)
                block["content"] = content
            elif part["output"]:
                block["content"] = part["output"]
            if part.get("is_error"):
                block["is_error"] = True
            blocks.append(block)
    return blocks


def _mark_history_tail(messages: list[dict[str, Any]]) -> None:
    if not messages:
        return
    for block in reversed(messages[-1]["content"]):
        if block.get("type") in _CACHEABLE:
            block["cache_control"] = _EPHEMERAL
            return


def _mid_loop_without_thinking(messages: list[dict[str, Any]]) -> bool:
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in messages[-1]["content"]):
        return False
    first = messages[-2]["content"][0] if messages[-2]["content"] else {}
    return first.get("type") not in ("thinking", "redacted_thinking")


def _tool_choice(choice: Any) -> dict[str, Any]:
    if choice == "required":
        return {"type": "any"}
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice["name"]}


# Decoding ------------------------------------------------------------------------------------

_NO_EVENTS: tuple[StreamEvent, ...] = ()


class AnthropicDecoder:
    """Messages stream events -> normalized events and the assembled reply."""

    __slots__ = (
        "_blocks",
        "_builder",
        "_ctx",
        "_model",
        "_response_id",
        "_search_blocks",
        "_stop_details",
        "_stop_reason",
        "_tools",
        "_usage",
        "complete",
    )

    def __init__(self, ctx: ErrorContext, model: str) -> None:
        self._ctx = ctx
        self._model = model
        self._builder = MessageBuilder("anthropic")
        self._blocks: dict[int, str] = {}  # block index -> text | reasoning | tool | ignored
        self._tools: dict[int, int] = {}  # block index -> tool call ordinal
        self._search_blocks: dict[int, dict[str, Any]] = {}  # open server_tool_use blocks
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._stop_details: dict[str, Any] | None = None
        self._response_id: str | None = None
        self.complete = False

    def feed(self, event: str, data: bytes) -> Sequence[StreamEvent]:
        try:
            obj = loads(data)
        except ValueError as exc:
            raise invalid_response(self._ctx, f"bad JSON in a `{event}` event ({exc})") from exc
        return self.feed_obj(event, obj)

    def feed_obj(self, event: str, obj: Any) -> Sequence[StreamEvent]:
        if not isinstance(obj, dict):
            raise invalid_response(self._ctx, f"a `{event}` event is not a JSON object")
        kind = obj.get("type") or event
        if kind == "content_block_delta":
            return self._delta(obj)
        if kind == "content_block_start":
            return self._start(obj)
        if kind == "content_block_stop":
            self._end_search(obj.get("index", -1))
            ordinal = self._tools.get(obj.get("index", -1))
            return (ToolCallEnd(ordinal),) if ordinal is not None else _NO_EVENTS
        if kind == "message_start":
            message = obj.get("message") or {}
            self._response_id = message.get("id")
            return self._update_usage(message.get("usage"))
        if kind == "message_delta":
            delta = obj.get("delta") or {}
            if delta.get("stop_reason"):
                self._stop_reason = delta["stop_reason"]
            if isinstance(delta.get("stop_details"), dict):
                self._stop_details = delta["stop_details"]
            return self._update_usage(obj.get("usage"))
        if kind == "message_stop":
            self.complete = True
            return _NO_EVENTS
        if kind == "error":
            codes, message = payload_fields(obj)
            raise classify(self._ctx, status=None, codes=codes, detail=message)
        return _NO_EVENTS  # ping and event types newer than this code

    def _delta(self, obj: dict[str, Any]) -> Sequence[StreamEvent]:
        index = obj.get("index", 0)
        delta = obj.get("delta") or {}
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text", "")
            if self._blocks.get(index, "text") != "text" or not text:
                return _NO_EVENTS
            self._blocks[index] = "text"
            self._builder.text(index, text)
            return (TextDelta(text),)
        if dtype == "input_json_delta":
            ordinal = self._tools.get(index)
            fragment = delta.get("partial_json", "")
            if self._blocks.get(index) == "search" and fragment:
                self._builder.tool_args(index, fragment)  # the search's query, kept whole
                return _NO_EVENTS
            if ordinal is None or not fragment:
                return _NO_EVENTS  # another provider-side tool's input, or an empty fragment
            self._builder.tool_args(index, fragment)
            return (ToolCallDelta(ordinal, fragment),)
        if dtype == "thinking_delta":
            text = delta.get("thinking", "")
            if not text:
                return _NO_EVENTS
            self._builder.reasoning(index, text)
            return (ReasoningDelta(text),)
        if dtype == "citations_delta" and isinstance(delta.get("citation"), dict):
            self._builder.cite(index, delta["citation"])
            return _NO_EVENTS
        if dtype == "signature_delta":
            self._builder.state(index, "reasoning", signature=delta.get("signature", ""))
        return _NO_EVENTS

    def _start(self, obj: dict[str, Any]) -> Sequence[StreamEvent]:
        index = obj.get("index", 0)
        block = obj.get("content_block") or {}
        btype = block.get("type")
        builder = self._builder
        if btype == "text":
            self._blocks[index] = "text"
            for citation in block.get("citations") or ():
                if isinstance(citation, dict):  # a whole (non-streamed) reply carries them here
                    builder.cite(index, citation)
            text = block.get("text") or ""
            if text:
                builder.text(index, text)
                return (TextDelta(text),)
            return _NO_EVENTS
        if btype == "thinking":
            self._blocks[index] = "reasoning"
            builder.state(index, "reasoning", model=self._model)
            if block.get("signature"):
                builder.state(index, "reasoning", signature=block["signature"])
            text = block.get("thinking") or ""
            if text:
                builder.reasoning(index, text)
                return (ReasoningDelta(text),)
            return _NO_EVENTS
        if btype == "redacted_thinking":
            self._blocks[index] = "reasoning"
            builder.state(index, "reasoning", model=self._model, redacted=block.get("data", ""))
            return _NO_EVENTS
        if btype == "tool_use":
            self._blocks[index] = "tool"
            ordinal = len(self._tools)
            self._tools[index] = ordinal
            call_id = block.get("id", "")
            name = block.get("name", "")
            builder.tool_call(index, call_id, name)
            events: list[StreamEvent] = [ToolCallStart(ordinal, call_id, name)]
            initial = block.get("input")
            if initial:  # a whole (non-streamed) reply carries the input here
                raw = dumps(initial).decode()
                builder.tool_args(index, raw)
                events.append(ToolCallDelta(ordinal, raw))
            return events
        if btype == "server_tool_use" and block.get("name") == "web_search":
            # The provider's own search: recorded (and resent) but not a call for xum to make.
            self._blocks[index] = "search"
            builder.web_search(index, str(block.get("id", "")))
            self._search_blocks[index] = block
            return _NO_EVENTS
        if btype == "web_search_tool_result":
            self._blocks[index] = "ignored"
            key = builder.find_search(str(block.get("tool_use_id", "")))
            record_search_result(builder, index if key is None else key, block)
            return _NO_EVENTS
        # Other provider-side blocks (other server tools): the provider ran them itself; they
        # are not calls for xum to make, and are not replayed.
        self._blocks[index] = "ignored"
        return _NO_EVENTS

    def _end_search(self, index: int) -> None:
        """A search's input is complete: its block, with that input, is what a replay sends."""
        block = self._search_blocks.pop(index, None)
        if block is not None:
            raw = self._builder.args_text(index)
            use = {**block, "input": parse_arguments(raw) if raw else block.get("input") or {}}
            self._builder.state(index, "web_search", use=use)

    def _update_usage(self, raw: Any) -> Sequence[StreamEvent]:
        if not isinstance(raw, dict):
            return _NO_EVENTS
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = raw.get(key)
            if isinstance(value, int):
                self._usage[key] = value  # later events repeat running totals
        details = raw.get("output_tokens_details")
        if isinstance(details, dict) and isinstance(details.get("thinking_tokens"), int):
            self._usage["thinking_tokens"] = details["thinking_tokens"]
        return (UsageUpdate(self.usage()),)

    def usage(self) -> Usage:
        u = self._usage
        read = u.get("cache_read_input_tokens", 0)
        write = u.get("cache_creation_input_tokens", 0)
        return Usage(
            input_tokens=u.get("input_tokens", 0) + read + write,
            output_tokens=u.get("output_tokens", 0),
            cache_read_tokens=read,
            cache_write_tokens=write,
            reasoning_tokens=u.get("thinking_tokens", 0),
        )

    def finish(self) -> Finish:
        if not self.complete:
            raise network_error(self._ctx, "the stream ended before the reply was complete")
        for index in list(self._search_blocks):
            self._end_search(index)  # a reply cut short (or a whole one) has no block stop
        message = self._builder.build()
        return Finish(
            reason=finish_reason(self._stop_reason, message, FINISH_REASONS),
            message=message,
            usage=self.usage(),
            raw_reason=self._stop_reason or "",
            response_id=self._response_id,
            usage_reported=bool(self._usage),
            stop_details=self._stop_details,
        )


def record_search_result(builder: MessageBuilder, key: Any, block: dict[str, Any]) -> None:
    """A `web_search_tool_result` block: its hits (title and URL only, for the transcript) and
    the block itself, replay state of the search it answers."""
    content = block.get("content")
    hits: list[SearchHit] = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("type") == "web_search_result":
                hits.append(
                    {"title": str(item.get("title") or ""), "url": str(item.get("url") or "")}
                )
        builder.state(key, "web_search", result=block)
    elif isinstance(content, dict):  # web_search_tool_result_error
        builder.state(
            key, "web_search", result=block, error=str(content.get("error_code") or "error")
        )
    builder.search_results(key, hits=hits)
