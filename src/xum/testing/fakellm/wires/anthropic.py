"""Anthropic Messages: `POST /v1/messages`, JSON or SSE (`event:` + `data:` frames)."""

from __future__ import annotations

from typing import Any

from xum.testing.fakellm.cache import Breakpoint, CacheInput
from xum.testing.fakellm.script import Item, Reasoning, Reply, StreamError, Text, ToolCall
from xum.testing.fakellm.tokens import canonical
from xum.testing.fakellm.wires.common import (
    LENGTH_REASONS,
    RenderContext,
    StreamPlan,
    WireCodec,
    chunks,
    fake_signature,
    new_id,
    sse,
)

MAX_BREAKPOINTS = 4

# The provider's own bytes for a ping (note the space after the colon).
PING = b'event: ping\ndata: {"type": "ping"}\n\n'

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_ALIASES = {"stop": "end_turn", "tool_calls": "tool_use", "content_filter": "refusal"}


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _strip(block: Any) -> tuple[Any, dict[str, Any] | None]:
    """The block without its cache_control (moving a breakpoint does not change the prefix),
    and the breakpoint it carried, looking one level into tool_result content too."""
    if not isinstance(block, dict):
        return block, None
    marker = block.get("cache_control")
    out = {k: v for k, v in block.items() if k != "cache_control"}
    inner = out.get("content")
    if out.get("type") == "tool_result" and isinstance(inner, list):
        stripped = []
        for sub in inner:
            sub_clean, sub_marker = _strip(sub)
            stripped.append(sub_clean)
            marker = marker or sub_marker
        out["content"] = stripped
    return out, marker if isinstance(marker, dict) else None


def count_breakpoints(body: dict[str, Any]) -> int:
    n = 0
    for tool in body.get("tools") or []:
        n += _strip(tool)[1] is not None
    for block in _blocks(body.get("system")):
        n += _strip(block)[1] is not None
    for msg in body.get("messages") or []:
        if isinstance(msg, dict):
            for block in _blocks(msg.get("content")):
                n += _strip(block)[1] is not None
    return n


class AnthropicCodec(WireCodec):
    wire = "anthropic"
    input_excludes_cache = True
    request_id_header = "request-id"

    def uses_cache_breakpoints(self) -> bool:
        return True

    def cache_input(self, body: dict[str, Any]) -> CacheInput:
        inp = CacheInput(namespace=f"anthropic\0{body.get('model')}")

        def add(tag: bytes, block: Any) -> None:
            clean, marker = _strip(block)
            if marker is not None:
                ttl = str(marker.get("ttl") or "5m")
                inp.breakpoints.append(Breakpoint(len(inp.elements), ttl))
            inp.elements.append(tag + canonical(clean))

        # Prefix order is tools -> system -> messages, as the provider renders it.
        for tool in body.get("tools") or []:
            add(b"tool\0", tool)
        for block in _blocks(body.get("system")):
            add(b"system\0", block)
        for msg in body.get("messages") or []:
            if not isinstance(msg, dict):
                continue
            for j, block in enumerate(_blocks(msg.get("content"))):
                # The role tags the first block, so [A][B] and [A, B] differ.
                add(f"{msg.get('role')}\0".encode() if j == 0 else b"\0", block)
        top = body.get("cache_control")
        if isinstance(top, dict) and inp.elements:
            # Automatic caching: the breakpoint goes on the last cacheable block.
            inp.breakpoints.append(Breakpoint(len(inp.elements) - 1, str(top.get("ttl") or "5m")))
        return inp

    def validate(self, body: dict[str, Any]) -> str | None:
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return f"{key}: Field required"
        messages = body["messages"]
        if not isinstance(messages, list):
            return "messages: Input should be a valid list"
        n = count_breakpoints(body)
        if n > MAX_BREAKPOINTS:
            return (
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {n}."
            )
        return _check_tool_pairs(messages) or _check_tools_declared(body, messages)

    def visible(
        self, content: tuple[Item, ...], body: dict[str, Any], notes: list[str]
    ) -> tuple[Item, ...]:
        thinking = body.get("thinking")
        enabled = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
        if enabled or not any(isinstance(i, Reasoning) for i in content):
            return content
        notes.append("reasoning dropped: the request did not enable thinking")
        return tuple(i for i in content if not isinstance(i, Reasoning))

    def _stop_reason(self, reply: Reply, content: tuple[Item, ...]) -> str:
        if reply.stop_reason is None:
            return "tool_use" if any(isinstance(i, ToolCall) for i in content) else "end_turn"
        if reply.stop_reason in LENGTH_REASONS:
            return "max_tokens"
        return _ALIASES.get(reply.stop_reason, reply.stop_reason)

    def _usage(self, ctx: RenderContext, output_tokens: int) -> dict[str, Any]:
        u = ctx.usage
        return {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_write,
            "cache_read_input_tokens": u.cache_read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": u.cache_write - u.cache_write_1h,
                "ephemeral_1h_input_tokens": u.cache_write_1h,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def _ids(self, content: tuple[Item, ...]) -> list[str]:
        return [(i.id or new_id("toolu_")) if isinstance(i, ToolCall) else "" for i in content]

    def render_json(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        for item, call_id in zip(ctx.content, self._ids(ctx.content), strict=True):
            if isinstance(item, Text):
                blocks.append({"type": "text", "text": item.text})
            elif isinstance(item, Reasoning):
                blocks.append(
                    {"type": "thinking", "thinking": item.text, "signature": _signature(item)}
                )
            else:
                args: Any = item.arguments
                if isinstance(args, str):
                    args = _parse_or_raw(args)
                blocks.append({"type": "tool_use", "id": call_id, "name": item.name, "input": args})
        return {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": blocks,
            "stop_reason": self._stop_reason(reply, ctx.content),
            "stop_sequence": None,
            "usage": self._usage(ctx, ctx.usage.output_tokens),
        }

    def render_stream(self, reply: Reply, ctx: RenderContext) -> StreamPlan:
        message: dict[str, Any] = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(ctx, min(1, ctx.usage.output_tokens)),
        }
        frames = [sse("message_start", {"type": "message_start", "message": message})]
        size = reply.chunk_size
        for index, (item, call_id) in enumerate(
            zip(ctx.content, self._ids(ctx.content), strict=True)
        ):
            deltas: list[dict[str, Any]]
            if isinstance(item, Text):
                block: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": c} for c in chunks(item.text, size)]
            elif isinstance(item, Reasoning):
                block = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": c} for c in chunks(item.text, size)
                ]
                sig = _signature(item)
                if sig:
                    deltas.append({"type": "signature_delta", "signature": sig})
            else:
                block = {"type": "tool_use", "id": call_id, "name": item.name, "input": {}}
                # The provider opens every tool input with an empty fragment.
                parts = ["", *chunks(item.arguments_text(), size)]
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
            frames.append(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            )
            if index == 0:
                frames.append(PING)
            for delta in deltas:
                frames.append(
                    sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
            frames.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        if not ctx.content:
            frames.append(PING)
        frames.append(
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": self._stop_reason(reply, ctx.content),
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": ctx.usage.output_tokens},
                },
            )
        )
        frames.append(sse("message_stop", {"type": "message_stop"}))
        return StreamPlan(frames, tail=2)

    def stream_error_frames(
        self, err: StreamError, ctx: RenderContext, sequence: int
    ) -> list[bytes]:
        payload = {"type": err.code or "overloaded_error", "message": err.message}
        return [sse("error", {"type": "error", "error": payload})]

    def error_body(self, status: int, message: str | None, request_id: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message or _default_message(kind)},
            "request_id": request_id,
        }


def _default_message(kind: str) -> str:
    return {
        "overloaded_error": "Overloaded",
        "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
        "api_error": "Internal server error",
    }.get(kind, f"fakellm: scripted {kind}")


def _signature(item: Reasoning) -> str:
    return fake_signature(item.text) if item.signature is None else item.signature


def _parse_or_raw(raw: str) -> Any:
    """A scripted raw argument string: its JSON value, or the string itself when it is not
    valid JSON (the real API cannot send that without streaming; it lets a client test its
    guard)."""
    import orjson

    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def _check_tools_declared(body: dict[str, Any], messages: list[Any]) -> str | None:
    """The provider's rule: a request whose history holds tool_use or tool_result blocks must
    declare tools (`tool_choice: none` is how a request keeps them from being called)."""
    if body.get("tools"):
        return None
    for msg in messages:
        for block in _blocks(msg.get("content") if isinstance(msg, dict) else None):
            if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result"):
                return (
                    "Requests which include `tool_use` or `tool_result` blocks must define tools."
                )
    return None


def _check_tool_pairs(messages: list[Any]) -> str | None:
    """The provider's rule: every tool_use is answered by a tool_result in the next message,
    and every tool_result answers a tool_use in the previous one."""
    previous_uses: set[str] = set()
    for n, msg in enumerate(messages):
        if not isinstance(msg, dict):
            return f"messages.{n}: Input should be a valid dictionary"
        blocks = _blocks(msg.get("content"))
        results = [
            (j, b.get("tool_use_id"))
            for j, b in enumerate(blocks)
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        for j, use_id in results:
            if use_id not in previous_uses:
                return (
                    f"messages.{n}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        if previous_uses:
            missing = sorted(previous_uses - {r for _, r in results})
            if missing:
                return (
                    f"messages.{n - 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
        previous_uses = {
            str(b.get("id"))
            for b in blocks
            if isinstance(b, dict)
            and b.get("type") == "tool_use"
            and msg.get("role") == "assistant"
        }
    return None
