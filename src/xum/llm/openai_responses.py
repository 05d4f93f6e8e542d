"""OpenAI Responses API: `POST {base_url}/responses`, stateless (`store: false`).

Nothing is kept on OpenAI's side between requests: every request carries the whole history,
and reasoning continues across turns through the encrypted reasoning items the API returns
when asked (`include: ["reasoning.encrypted_content"]`). Item ids are recorded in the replay
state but not sent back: with `store: false` the API looks an id up in storage it never wrote
and rejects the request ("Item with id 'rs_...' not found").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from xum.core.images import ImageSource
from xum.llm.catalog import lookup
from xum.llm.common import (
    MessageBuilder,
    counts_tokens,
    finish_reason,
    loads,
    max_output,
    own_state,
)
from xum.llm.errors import ErrorContext, classify, invalid_response, network_error, payload_fields
from xum.llm.http import WireClient
from xum.llm.images import responses_block, tool_images_intro
from xum.llm.params import apply_params
from xum.llm.thinking import OPENAI_EFFORT, clamp_thinking
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

WIRE: Final = "openai-responses"
SEARCH_SOURCES: Final = "web_search_call.action.sources"


FINISH_REASONS: dict[str, FinishReason] = {
    "completed": "stop",
    "max_output_tokens": "length",
    "content_filter": "content_filter",
    "refusal": "refusal",
}


class OpenAIResponsesClient(WireClient):
    wire = "openai-responses"
    path = "responses"

    def encode(self, request: LLMRequest, *, stream: bool = True) -> dict[str, Any]:
        provider = self.endpoint.provider
        model = request.model
        level = clamp_thinking(request.thinking, provider, model)
        known = lookup(provider, model) is not None
        body: dict[str, Any] = {"model": model}
        if stream:
            body["stream"] = True
        if request.system:
            body["instructions"] = request.system
        body["input"] = encode_input(request.messages, request.images)
        tools: list[dict[str, Any]] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
        if request.web_search is not None:
            tools.append(server_search_tool(request.web_search))
        if tools:
            body["tools"] = tools
            if request.tools and request.tool_choice is not None:
                body["tool_choice"] = _tool_choice(request.tool_choice)
        include: list[str] = []
        # A model the catalog does not know may not reason at all: "off" sends nothing rather
        # than a `reasoning` object such a model would reject.
        if known or level != "off":
            reasoning: dict[str, Any] = {"effort": OPENAI_EFFORT[level]}
            if level != "off":
                reasoning["summary"] = "auto"
            body["reasoning"] = reasoning
            include.append("reasoning.encrypted_content")
        if request.web_search is not None:
            include.append(SEARCH_SOURCES)  # the search's results, not only what is cited
        if include:
            body["include"] = include
        body["store"] = False
        if request.cache_key:
            body["prompt_cache_key"] = request.cache_key
        limit = max_output(request.max_output_tokens, request.params)
        if limit:
            body["max_output_tokens"] = limit
        apply_params(
            body, request.params, self.withheld_params(request), self.endpoint.body_options
        )
        return body

    def new_decoder(self, request: LLMRequest) -> ResponsesDecoder:
        return ResponsesDecoder(self.error_context(request.model))

    def body_frames(self, obj: Any) -> list[tuple[str, Any]]:
        if not isinstance(obj, dict):
            return []
        frames: list[tuple[str, Any]] = []
        for index, item in enumerate(obj.get("output") or []):
            frames.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        status = obj.get("status")
        kind = {"incomplete": "response.incomplete", "failed": "response.failed"}.get(
            status or "", "response.completed"
        )
        frames.append((kind, {"type": kind, "response": obj}))
        return frames


# Encoding ------------------------------------------------------------------------------------


def encode_input(
    messages: Sequence[Message], images: ImageSource | None = None
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    # A tool's images follow the step's results as one user message (see openai_chat).
    shown: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role != "tool" and shown:
            items.append({"type": "message", "role": "user", "content": shown})
            shown = []
        if role == "user":
            content: list[dict[str, Any]] = []
            for p in message["content"]:
                if p["type"] == "text" and p["text"]:
                    content.append({"type": "input_text", "text": p["text"]})
                elif p["type"] == "image":
                    content.append(responses_block(p, images))
            if content:
                items.append({"type": "message", "role": "user", "content": content})
        elif role == "tool":
            for part in message["content"]:
                if part["type"] == "tool_result":
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": part["call_id"],
                            "output": part["output"],
                        }
                    )
                    if part.get("images"):
                        intro = tool_images_intro(part["call_id"], part["name"])
                        shown.append({"type": "input_text", "text": intro})
                        shown.extend(responses_block(i, images) for i in part.get("images") or [])
        else:
            _assistant_items(message, items)
    if shown:
        items.append({"type": "message", "role": "user", "content": shown})
    return items


def _assistant_items(message: Message, items: list[dict[str, Any]]) -> None:
    text: list[dict[str, Any]] = []  # consecutive text parts form one message item

    def flush() -> None:
        if text:
            items.append({"type": "message", "role": "assistant", "content": list(text)})
            text.clear()

    for part in message["content"]:
        if part["type"] == "text":
            if part["text"]:
                text.append({"type": "output_text", "text": part["text"]})
        elif part["type"] == "reasoning":
            state = own_state(part, WIRE)
            if state is None or not state.get("encrypted_content"):
                continue  # without the encrypted blob there is nothing the API can resume
            flush()
            summary = state.get("summary")
            if not isinstance(summary, list):
                summary = [part["text"]] if part["text"] else []
            items.append(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": s} for s in summary],
                    "encrypted_content": state["encrypted_content"],
                }
            )
        # A `web_search` part is not resent: its item can only be referenced by id, and with
        # `store: false` the API keeps no items to look up. The answer's text carries what the
        # search found.
        elif part["type"] == "tool_call":
            flush()
            items.append(
                {
                    "type": "function_call",
                    "call_id": part["id"],
                    "name": part["name"],
                    "arguments": part["arguments"],
                }
            )
    flush()


def server_search_tool(search: NativeSearch) -> dict[str, Any]:
    """The Responses API's hosted web search tool. It has no per-request search limit, so
    `maxUses` does not apply here."""
    tool: dict[str, Any] = {"type": "web_search"}
    if search.allowed_domains:
        tool["filters"] = {"allowed_domains": list(search.allowed_domains)}
    return tool


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "name": choice["name"]}
    return choice


# Decoding ------------------------------------------------------------------------------------

_NO_EVENTS: tuple[StreamEvent, ...] = ()


class ResponsesDecoder:
    """Responses stream events -> normalized events and the assembled reply.

    Builder keys are `(output_index, content_index)`, so parts keep the order of the output.
    """

    __slots__ = (
        "_builder",
        "_ctx",
        "_ended",
        "_kinds",
        "_raw_reason",
        "_refused",
        "_response_id",
        "_streamed",
        "_summary_at",
        "_tools",
        "_usage",
        "_usage_seen",
        "complete",
    )

    def __init__(self, ctx: ErrorContext) -> None:
        self._ctx = ctx
        self._builder = MessageBuilder(WIRE)
        self._kinds: dict[int, str] = {}  # output_index -> item type
        self._tools: dict[int, int] = {}  # output_index -> tool call ordinal
        self._ended: set[int] = set()
        self._streamed: set[int] = set()  # output indexes that received deltas
        self._summary_at: dict[int, int] = {}  # output_index -> last summary index seen
        self._usage = Usage()
        self._usage_seen = False
        self._raw_reason: str | None = None
        self._refused = False
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
        index = obj.get("output_index", 0)
        if kind == "response.output_text.delta":
            delta = obj.get("delta") or ""
            if not delta:
                return _NO_EVENTS
            self._streamed.add(index)
            self._builder.text((index, obj.get("content_index", 0)), delta)
            return (TextDelta(delta),)
        if kind == "response.function_call_arguments.delta":
            delta = obj.get("delta") or ""
            ordinal = self._tools.get(index)
            if ordinal is None or not delta:
                return _NO_EVENTS
            self._streamed.add(index)
            self._builder.tool_args((index, 0), delta)
            return (ToolCallDelta(ordinal, delta),)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._reasoning_delta(index, obj)
        if kind == "response.refusal.delta":
            delta = obj.get("delta") or ""
            self._refused = True
            if not delta:
                return _NO_EVENTS
            self._streamed.add(index)
            self._builder.text((index, obj.get("content_index", 0)), delta)
            return (TextDelta(delta),)
        if kind == "response.output_item.added":
            return self._item_added(index, obj.get("item") or {})
        if kind == "response.output_item.done":
            return self._item_done(index, obj.get("item") or {})
        if kind in ("response.completed", "response.incomplete"):
            return self._completed(obj.get("response") or {})
        if kind in ("response.created", "response.in_progress"):
            self._response_id = (obj.get("response") or {}).get("id") or self._response_id
            return _NO_EVENTS
        if kind == "response.failed":
            response = obj.get("response") or {}
            codes, message = payload_fields(response.get("error") or response)
            raise classify(self._ctx, status=None, codes=codes or {"server_error"}, detail=message)
        if kind == "error":
            codes, message = payload_fields(obj)
            raise classify(self._ctx, status=None, codes=codes, detail=message)
        return _NO_EVENTS

    def _reasoning_delta(self, index: int, obj: dict[str, Any]) -> Sequence[StreamEvent]:
        delta = obj.get("delta") or ""
        if not delta:
            return _NO_EVENTS
        self._streamed.add(index)
        part = obj.get("summary_index", 0)
        previous = self._summary_at.get(index)
        self._summary_at[index] = part
        if previous is not None and part != previous:
            delta = "\n\n" + delta  # summaries come in separate paragraphs
        self._builder.reasoning((index, 0), delta)
        return (ReasoningDelta(delta),)

    def _item_added(self, index: int, item: dict[str, Any]) -> Sequence[StreamEvent]:
        itype = item.get("type", "")
        self._kinds[index] = itype
        if itype == "function_call":
            return self._start_call(index, item)
        if itype == "reasoning" and item.get("id"):
            self._builder.state((index, 0), "reasoning", id=item["id"])
        if itype == "web_search_call":
            self._builder.web_search((index, 0), str(item.get("id") or ""))
        return _NO_EVENTS

    def _start_call(self, index: int, item: dict[str, Any]) -> list[StreamEvent]:
        ordinal = len(self._tools)
        self._tools[index] = ordinal
        call_id = item.get("call_id") or item.get("id") or f"call_{ordinal}"
        self._builder.tool_call((index, 0), call_id, item.get("name", ""))
        if item.get("id"):
            self._builder.state((index, 0), "tool_call", id=item["id"])
        return [ToolCallStart(ordinal, call_id, item.get("name", ""))]

    def _item_done(self, index: int, item: dict[str, Any]) -> Sequence[StreamEvent]:
        """The finished item is authoritative; a whole (non-streamed) reply only has these."""
        itype = item.get("type", self._kinds.get(index, ""))
        builder = self._builder
        streamed = index in self._streamed
        events: list[StreamEvent] = []
        if itype == "message":
            for ci, content in enumerate(item.get("content") or []):
                ctype = content.get("type")
                text = content.get("text") if ctype == "output_text" else content.get("refusal")
                if ctype == "refusal":
                    self._refused = True
                if isinstance(text, str) and text and not streamed:
                    builder.text((index, ci), text)
                    events.append(TextDelta(text))
                for note in content.get("annotations") or ():
                    if isinstance(note, dict) and note.get("type") == "url_citation":
                        builder.cite((index, ci), note)
        elif itype == "reasoning":
            summary = [s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)]
            state: dict[str, Any] = {"summary": summary}
            if item.get("id"):
                state["id"] = item["id"]
            if item.get("encrypted_content"):
                state["encrypted_content"] = item["encrypted_content"]
            builder.state((index, 0), "reasoning", **state)
            joined = "\n\n".join(s for s in summary if s)
            if joined and not streamed:
                builder.reasoning((index, 0), joined)
                events.append(ReasoningDelta(joined))
        elif itype == "web_search_call":
            record_search_call(builder, (index, 0), item)
        elif itype == "function_call":
            if index not in self._tools:
                events.extend(self._start_call(index, item))
            ordinal = self._tools[index]
            arguments = item.get("arguments")
            if isinstance(arguments, str):
                if not streamed and arguments:
                    events.append(ToolCallDelta(ordinal, arguments))
                builder.replace_text((index, 0), "tool_call", arguments)
            if index not in self._ended:
                self._ended.add(index)
                events.append(ToolCallEnd(ordinal))
        return events

    def _completed(self, response: dict[str, Any]) -> Sequence[StreamEvent]:
        self.complete = True
        self._response_id = response.get("id") or self._response_id
        status = response.get("status") or "completed"
        details = response.get("incomplete_details") or {}
        self._raw_reason = details.get("reason") if status == "incomplete" else status
        if status == "incomplete" and not self._raw_reason:
            self._raw_reason = "incomplete"
        events: list[StreamEvent] = [
            ToolCallEnd(o) for i, o in self._tools.items() if i not in self._ended
        ]
        self._ended.update(self._tools)
        usage = response.get("usage")
        # `{}` or a bare total counts nothing: such a reply is unmeasured (cost unknown).
        if isinstance(usage, dict) and counts_tokens(usage, "input_tokens", "output_tokens"):
            self._usage = responses_usage(usage)
            self._usage_seen = True
            events.append(UsageUpdate(self._usage))
        return events

    def finish(self) -> Finish:
        if not self.complete:
            raise network_error(self._ctx, "the stream ended before the reply was complete")
        message = self._builder.build()
        raw = "refusal" if self._refused else self._raw_reason
        return Finish(
            reason=finish_reason(raw, message, FINISH_REASONS),
            message=message,
            usage=self._usage,
            raw_reason=self._raw_reason or "",
            response_id=self._response_id,
            usage_reported=self._usage_seen,
        )


def responses_usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("input_tokens_details") or {}
    out_details = raw.get("output_tokens_details") or {}
    return Usage(
        input_tokens=_int(raw.get("input_tokens")),
        output_tokens=_int(raw.get("output_tokens")),
        cache_read_tokens=_int(details.get("cached_tokens")),
        cache_write_tokens=_int(details.get("cache_write_tokens")),
        reasoning_tokens=_int(out_details.get("reasoning_tokens")),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def record_search_call(builder: MessageBuilder, key: Any, item: dict[str, Any]) -> None:
    """A finished `web_search_call` item: what was searched and, when the request asked for the
    sources, the pages it found."""
    builder.web_search(key, str(item.get("id") or ""))
    raw_action = item.get("action")
    action: dict[str, Any] = raw_action if isinstance(raw_action, dict) else {}
    query = action.get("query")
    if not isinstance(query, str):
        queries = action.get("queries")
        query = str(queries[0]) if isinstance(queries, list) and queries else ""
    hits: list[SearchHit] = [
        {"title": str(source.get("title") or ""), "url": str(source["url"])}
        for source in action.get("sources") or ()
        if isinstance(source, dict) and isinstance(source.get("url"), str)
    ]
    state: dict[str, Any] = {"item": item}
    if item.get("status") == "failed":
        state["error"] = "failed"
    builder.state(key, "web_search", **state)
    builder.search_results(key, query=query, hits=hits)
