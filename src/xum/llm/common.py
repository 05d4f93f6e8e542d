"""Pieces the three wire formats share: assembling the reply, replay state, parameters, JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from xum.llm.types import (
    FinishReason,
    Message,
    Part,
    ReasoningPart,
    SearchHit,
    TextPart,
    ToolCallPart,
    WebSearchPart,
    Wire,
)


def dumps(obj: Any) -> bytes:
    """The request body. orjson keeps insertion order and has one spelling per value, so the
    same request always gives the same bytes (prompt caching needs byte-identical prefixes)."""
    return orjson.dumps(obj)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


# Replay state --------------------------------------------------------------------------------


def own_state(part: Part, wire: Wire) -> dict[str, Any] | None:
    """The part's replay state if it was produced by `wire`, else None (foreign state is
    dropped: a signature or encrypted blob from one provider means nothing to another)."""
    if part.get("wire") != wire:
        return None
    state = part.get("state")
    return state if isinstance(state, dict) else None


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool arguments as an object for wires that want one. Invalid or non-object JSON becomes
    `{}`: the engine has already told the model its call was malformed, and the wire needs an
    object to accept the history at all."""
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


# Parameters (which ones a request carries: xum.llm.params) -----------------------------------


def max_output(request_max: int | None, params: Mapping[str, Any]) -> int | None:
    """The explicit output limit: the request's own (thinking level, UI) before
    `modelParameters.max_output_tokens`."""
    if request_max:
        return request_max
    value = params.get("max_output_tokens")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


# Reply assembly ------------------------------------------------------------------------------


class _Slot:
    __slots__ = ("call_id", "chunks", "hits", "kind", "name", "query", "state")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "text" | "reasoning" | "tool_call" | "web_search"
        self.chunks: list[str] = []
        self.state: dict[str, Any] | None = None
        self.call_id = ""
        self.name = ""
        self.query: str | None = None  # web_search: set when the wire names it outright
        self.hits: list[SearchHit] | None = None  # web_search: the results, once known


class MessageBuilder:
    """Collects streamed pieces by position and builds the final assistant message.

    Keys order the parts (block index, output index, ...); they need only be comparable with
    each other. Text arrives as many small chunks, joined once at the end.
    """

    __slots__ = ("_slots", "_wire")

    def __init__(self, wire: Wire) -> None:
        self._wire = wire
        self._slots: dict[Any, _Slot] = {}

    def _slot(self, key: Any, kind: str) -> _Slot:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot(kind)
        return slot

    def text(self, key: Any, delta: str) -> None:
        self._slot(key, "text").chunks.append(delta)

    def reasoning(self, key: Any, delta: str) -> None:
        self._slot(key, "reasoning").chunks.append(delta)

    def state(self, key: Any, kind: str, **values: Any) -> None:
        slot = self._slot(key, kind)
        if slot.state is None:
            slot.state = {}
        slot.state.update(values)

    def replace_text(self, key: Any, kind: str, text: str) -> None:
        slot = self._slot(key, kind)
        slot.chunks = [text]

    def tool_call(self, key: Any, call_id: str, name: str) -> None:
        slot = self._slot(key, "tool_call")
        slot.call_id = call_id or slot.call_id
        slot.name = name or slot.name

    def tool_args(self, key: Any, delta: str) -> None:
        self._slot(key, "tool_call").chunks.append(delta)

    def web_search(self, key: Any, call_id: str) -> None:
        """A provider-side search begins; its input may follow as `tool_args` chunks."""
        self._slot(key, "web_search").call_id = call_id

    def search_results(
        self, key: Any, *, query: str | None = None, hits: list[SearchHit] | None = None
    ) -> None:
        slot = self._slot(key, "web_search")
        if query is not None:
            slot.query = query
        if hits is not None:
            slot.hits = hits

    def find_search(self, call_id: str) -> Any | None:
        """The key of the search with this id, if any."""
        for key, slot in self._slots.items():
            if slot.kind == "web_search" and slot.call_id == call_id:
                return key
        return None

    def cite(self, key: Any, citation: dict[str, Any]) -> None:
        """A citation of a text block (replay state: the wire may want it back)."""
        slot = self._slot(key, "text")
        if slot.state is None:
            slot.state = {}
        slot.state.setdefault("citations", []).append(citation)

    def args_text(self, key: Any) -> str:
        slot = self._slots.get(key)
        return "".join(slot.chunks) if slot is not None else ""

    def has(self, key: Any) -> bool:
        return key in self._slots

    def tool_count(self) -> int:
        return sum(1 for slot in self._slots.values() if slot.kind == "tool_call")

    def build(self) -> Message:
        parts: list[Part] = []
        for key in sorted(self._slots):
            part = self._part(self._slots[key])
            if part is not None:
                parts.append(part)
        return {"role": "assistant", "content": parts}

    def _part(self, slot: _Slot) -> Part | None:
        text = "".join(slot.chunks)
        if slot.kind == "tool_call":
            call: ToolCallPart = {
                "type": "tool_call",
                "id": slot.call_id,
                "name": slot.name,
                "arguments": text or "{}",
            }
            if slot.state:
                call["wire"] = self._wire
                call["state"] = slot.state
            return call
        if slot.kind == "web_search":
            return self._search_part(slot, text)
        if slot.kind == "reasoning":
            if not text and not slot.state:
                return None
            reasoning: ReasoningPart = {"type": "reasoning", "text": text}
            if slot.state:
                reasoning["wire"] = self._wire
                reasoning["state"] = slot.state
            return reasoning
        if not text and not slot.state:
            return None  # empty text blocks (a refusal's, say) carry nothing
        part: TextPart = {"type": "text", "text": text}
        if slot.state:
            part["wire"] = self._wire
            part["state"] = slot.state
        return part

    def _search_part(self, slot: _Slot, raw_input: str) -> WebSearchPart:
        query = slot.query
        if query is None:
            value = parse_arguments(raw_input).get("query")
            query = value if isinstance(value, str) else ""
        part: WebSearchPart = {
            "type": "web_search",
            "id": slot.call_id,
            "query": query,
            "results": slot.hits or [],
        }
        state = dict(slot.state or {})
        if isinstance(state.get("error"), str):
            part["error"] = state.pop("error")
        if state:
            part["wire"] = self._wire
            part["state"] = state
        return part


def counts_tokens(usage: Mapping[str, Any], *keys: str) -> bool:
    """Whether a usage object really counts tokens: some servers send `{}`, or only a total,
    and a reply so reported is unmeasured, not free."""
    return any(type(usage.get(key)) is int for key in keys)


def tool_calls_in(message: Message) -> int:
    return sum(1 for part in message["content"] if part["type"] == "tool_call")


def finish_reason(
    raw: str | None, message: Message, table: Mapping[str, FinishReason]
) -> FinishReason:
    """Normalize a stop reason. A reply with tool calls is `tool_calls` whatever the server
    said (several compatible servers send "stop" there); a missing reason is a plain stop."""
    if raw and raw in table:
        reason = table[raw]
        if reason == "stop" and tool_calls_in(message):
            return "tool_calls"
        return reason
    if tool_calls_in(message):
        return "tool_calls"
    return "stop" if not raw else "other"


def merge_text(parts: Iterable[Part]) -> str:
    return "".join(p["text"] for p in parts if p["type"] == "text")
