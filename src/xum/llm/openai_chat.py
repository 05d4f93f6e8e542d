"""OpenAI Chat Completions: `POST {base_url}/chat/completions`.

The lingua franca of OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter,
DeepSeek, xAI, Gemini's compatible endpoint, ...), so the decoder is forgiving about the small
ways they differ: reasoning under `reasoning_content` or `reasoning`, tool calls with or without
an `index`, usage in the last chunk or nowhere, a missing `[DONE]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from xum.core.images import ImageSource
from xum.llm.catalog import lookup
from xum.llm.common import (
    MessageBuilder,
    counts_tokens,
    dumps,
    finish_reason,
    loads,
    max_output,
    own_state,
)
from xum.llm.errors import ErrorContext, classify, invalid_response, network_error, payload_fields
from xum.llm.http import WireClient
from xum.llm.images import chat_block, tool_images_intro
from xum.llm.params import apply_params
from xum.llm.thinking import chat_effort, clamp_thinking
from xum.llm.types import (
    Finish,
    FinishReason,
    LLMRequest,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageUpdate,
)

WIRE: Final = "openai-chat"
_REASONING_FIELDS = ("reasoning_content", "reasoning")

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "refusal": "refusal",
}

# Builder keys: reasoning first, then text, then tool calls in order.
_REASONING_KEY = (0, 0)
_TEXT_KEY = (1, 0)


class OpenAIChatClient(WireClient):
    wire = "openai-chat"
    path = "chat/completions"

    def encode(self, request: LLMRequest, *, stream: bool = True) -> dict[str, Any]:
        provider = self.endpoint.provider
        model = request.model
        info = lookup(provider, model)
        is_openai = provider == "openai"
        body: dict[str, Any] = {"model": model}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(encode_messages(request.messages, request.images))
        body["messages"] = messages
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
            if request.tool_choice is not None:
                body["tool_choice"] = _tool_choice(request.tool_choice)
        # Only models known to take `reasoning_effort` get it: many compatible servers reject
        # the field for models that cannot think. Others can set it via modelParameters.
        if info is not None:
            effort = chat_effort(
                clamp_thinking(request.thinking, provider, model), info.chat_reasoning
            )
            if effort is not None:
                body["reasoning_effort"] = effort
        limit = max_output(request.max_output_tokens, request.params)
        if limit:
            # OpenAI replaced max_tokens with max_completion_tokens; compatible servers still
            # read max_tokens.
            body["max_completion_tokens" if is_openai else "max_tokens"] = limit
        if request.cache_key and is_openai:
            body["prompt_cache_key"] = request.cache_key
        apply_params(
            body, request.params, self.withheld_params(request), self.endpoint.body_options
        )
        return body

    def new_decoder(self, request: LLMRequest) -> ChatDecoder:
        return ChatDecoder(self.error_context(request.model))

    def body_frames(self, obj: Any) -> list[tuple[str, Any]]:
        if not isinstance(obj, dict):
            return []
        choices = []
        for choice in obj.get("choices") or []:
            message = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [
                    {**call, "index": i} for i, call in enumerate(calls) if isinstance(call, dict)
                ]
            choices.append(
                {
                    "index": choice.get("index", 0),
                    "delta": message,
                    "finish_reason": choice.get("finish_reason"),
                }
            )
        chunk = {"id": obj.get("id"), "choices": choices, "usage": obj.get("usage")}
        return [("", chunk), ("", "[DONE]")]


# Encoding ------------------------------------------------------------------------------------


def encode_messages(
    messages: Sequence[Message], images: ImageSource | None = None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    # Tool messages take text only: a tool's images follow the step's results in one user
    # message (a user message may not come between the results of one step).
    shown: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role != "tool" and shown:
            out.append({"role": "user", "content": shown})
            shown = []
        if role == "user":
            pictured = any(p["type"] == "image" for p in message["content"])
            if pictured:
                content: list[dict[str, Any]] = []
                for p in message["content"]:
                    if p["type"] == "text" and p["text"]:
                        content.append({"type": "text", "text": p["text"]})
                    elif p["type"] == "image":
                        content.append(chat_block(p, images))
                out.append({"role": "user", "content": content})
                continue
            text = "\n\n".join(
                p["text"] for p in message["content"] if p["type"] == "text" and p["text"]
            )
            if text:
                out.append({"role": "user", "content": text})
        elif role == "tool":
            for part in message["content"]:
                if part["type"] == "tool_result":
                    out.append(
                        {"role": "tool", "tool_call_id": part["call_id"], "content": part["output"]}
                    )
                    if part.get("images"):
                        intro = tool_images_intro(part["call_id"], part["name"])
                        shown.append({"type": "text", "text": intro})
                        shown.extend(chat_block(i, images) for i in part.get("images") or [])
        else:
            encoded = _assistant(message)
            if encoded is not None:
                out.append(encoded)
    if shown:
        out.append({"role": "user", "content": shown})
    return out


def _assistant(message: Message) -> dict[str, Any] | None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    field = "reasoning_content"
    for part in message["content"]:
        if part["type"] == "text":
            texts.append(part["text"])
        elif part["type"] == "tool_call":
            calls.append(
                {
                    "id": part["id"],
                    "type": "function",
                    "function": {"name": part["name"], "arguments": part["arguments"]},
                }
            )
        elif part["type"] == "reasoning":
            # Servers that show their reasoning (DeepSeek, Kimi, ...) want it back in the
            # field it came from; reasoning from other wires is not theirs to read.
            state = own_state(part, WIRE)
            if state is not None and part["text"]:
                reasoning.append(part["text"])
                field = state.get("field", field)
    text = "".join(texts)
    if not text and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        out[field] = "".join(reasoning)
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


# Decoding ------------------------------------------------------------------------------------

_NO_EVENTS: tuple[StreamEvent, ...] = ()


class ChatDecoder:
    __slots__ = (
        "_builder",
        "_by_id",
        "_by_index",
        "_calls",
        "_ctx",
        "_done",
        "_ended",
        "_finish_reason",
        "_last_ordinal",
        "_refused",
        "_response_id",
        "_usage",
        "_usage_seen",
    )

    def __init__(self, ctx: ErrorContext) -> None:
        self._ctx = ctx
        self._builder = MessageBuilder(WIRE)
        self._calls: list[_PendingCall] = []  # by ordinal
        self._by_index: dict[Any, int] = {}  # the server's tool index -> its current call
        self._by_id: dict[str, int] = {}
        self._last_ordinal: int | None = None
        self._ended = False
        self._done = False
        self._finish_reason: str | None = None
        self._refused = False
        self._usage = Usage()
        self._usage_seen = False
        self._response_id: str | None = None

    @property
    def complete(self) -> bool:
        return self._done

    def feed(self, event: str, data: bytes) -> Sequence[StreamEvent]:
        if data[:6] == b"[DONE]":
            return self.feed_obj(event, "[DONE]")
        try:
            obj = loads(data)
        except ValueError as exc:
            raise invalid_response(self._ctx, f"bad JSON in a stream chunk ({exc})") from exc
        return self.feed_obj(event, obj)

    def feed_obj(self, event: str, obj: Any) -> Sequence[StreamEvent]:
        if obj == "[DONE]":
            self._done = True
            return self._end_calls()
        if not isinstance(obj, dict):
            raise invalid_response(self._ctx, "a stream chunk is not a JSON object")
        if obj.get("error"):
            codes, message = payload_fields(obj)
            raise classify(self._ctx, status=None, codes=codes, detail=message)
        if self._response_id is None and obj.get("id"):
            self._response_id = obj["id"]
        choices = obj.get("choices")
        events: list[StreamEvent] = []
        if choices:
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                self._delta(delta, events)
            reason = choice.get("finish_reason")
            if reason:
                self._finish_reason = reason
                events.extend(self._end_calls())
        usage = obj.get("usage")
        # `{}` or a bare total counts nothing: such a reply is unmeasured (cost unknown).
        if isinstance(usage, dict) and counts_tokens(usage, "prompt_tokens", "completion_tokens"):
            self._usage = chat_usage(usage)
            self._usage_seen = True
            events.append(UsageUpdate(self._usage))
        return events

    def _delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> None:
        builder = self._builder
        for field in _REASONING_FIELDS:
            value = delta.get(field)
            if isinstance(value, str) and value:
                builder.reasoning(_REASONING_KEY, value)
                builder.state(_REASONING_KEY, "reasoning", field=field)
                events.append(ReasoningDelta(value))
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            builder.text(_TEXT_KEY, content)
            events.append(TextDelta(content))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refused = True
            builder.text(_TEXT_KEY, refusal)
            events.append(TextDelta(refusal))
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                if isinstance(call, dict):
                    self._call(call, events)

    def _call(self, call: dict[str, Any], events: list[StreamEvent]) -> None:
        function = call.get("function") or {}
        call_id = call.get("id") or ""
        index = call.get("index")
        ordinal: int | None
        if index is not None:
            ordinal = self._by_index.get(index)
            # Some servers number every parallel call 0: a new id where another call already
            # has a different one starts a new call instead of gluing its arguments on.
            if ordinal is not None and call_id and self._calls[ordinal].has_id(call_id) is False:
                ordinal = None
        elif call_id:  # no index (a few servers): a new id starts a new call
            ordinal = self._by_id.get(call_id)
        else:  # neither: a continuation of the last call
            ordinal = self._last_ordinal
        if ordinal is None:
            ordinal = len(self._calls)
            self._calls.append(_PendingCall(ordinal))
            if index is not None:
                self._by_index[index] = ordinal
        if call_id:
            self._by_id[call_id] = ordinal
        self._last_ordinal = ordinal
        pending = self._calls[ordinal]
        name = function.get("name")
        if call_id and not pending.call_id:
            pending.call_id = call_id
            if pending.started:  # an id after the start: the committed call gets the real one
                self._builder.tool_call((2, ordinal), call_id, "")
        if isinstance(name, str) and name and not pending.name:
            pending.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send an object, not JSON text
            arguments = dumps(arguments).decode()
        if isinstance(arguments, str) and arguments:
            pending.arguments.append(arguments)
        events.extend(pending.flush(self._builder))

    def _end_calls(self) -> list[StreamEvent]:
        if self._ended:
            return []
        self._ended = True
        events: list[StreamEvent] = []
        for pending in self._calls:
            events.extend(pending.flush(self._builder, final=True))
            events.append(ToolCallEnd(pending.ordinal))
        return events

    def finish(self) -> Finish:
        # Some servers end the body after the finish_reason chunk without `[DONE]`.
        if not self._done and self._finish_reason is None:
            raise network_error(self._ctx, "the stream ended before the reply was complete")
        for pending in self._calls:
            if not pending.name:
                raise invalid_response(
                    self._ctx,
                    f"tool call {pending.call_id or pending.ordinal + 1} arrived without a name",
                )
        message = self._builder.build()
        raw = "refusal" if self._refused else self._finish_reason
        return Finish(
            reason=finish_reason(raw, message, FINISH_REASONS),
            message=message,
            usage=self._usage,
            raw_reason=self._finish_reason or "",
            response_id=self._response_id,
            usage_reported=self._usage_seen,
        )


class _PendingCall:
    """One streamed tool call. Its `ToolCallStart` waits for the name (some servers send the
    name in a later delta than the id); arguments that arrive before it are held until then."""

    __slots__ = ("arguments", "call_id", "name", "ordinal", "started")

    def __init__(self, ordinal: int) -> None:
        self.ordinal = ordinal
        self.call_id = ""
        self.name = ""
        self.arguments: list[str] = []  # not yet passed on
        self.started = False

    def has_id(self, call_id: str) -> bool | None:
        """Whether this call is `call_id` (None: it has no id yet, so it may be)."""
        return None if not self.call_id else self.call_id == call_id

    def flush(self, builder: MessageBuilder, *, final: bool = False) -> list[StreamEvent]:
        """Events for what can be told now: the start once the name is known (or, at the end,
        whatever is known), then the arguments held so far."""
        key = (2, self.ordinal)
        events: list[StreamEvent] = []
        if not self.started:
            if not self.name and not final:
                return events
            self.started = True
            shown = self.call_id or f"call_{self.ordinal}"  # a server that sends no id at all
            builder.tool_call(key, shown, self.name)
            events.append(ToolCallStart(self.ordinal, shown, self.name))
        if self.arguments:
            text = "".join(self.arguments)
            self.arguments = []
            builder.tool_args(key, text)
            events.append(ToolCallDelta(self.ordinal, text))
        return events


def chat_usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    out_details = raw.get("completion_tokens_details") or {}
    cached = (
        _int(details.get("cached_tokens"))
        or _int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
        or _int(raw.get("cached_tokens"))  # Moonshot
    )
    return Usage(
        input_tokens=_int(raw.get("prompt_tokens")),
        output_tokens=_int(raw.get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=_int(details.get("cache_write_tokens")),
        reasoning_tokens=_int(out_details.get("reasoning_tokens")),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
