"""OpenAI Chat Completions: `POST /v1/chat/completions`, JSON or SSE (`data:` lines, `[DONE]`)."""

from __future__ import annotations

from typing import Any

from xum.testing.fakellm.cache import CacheInput
from xum.testing.fakellm.script import Item, Reasoning, Reply, StreamError, Text, ToolCall
from xum.testing.fakellm.tokens import canonical
from xum.testing.fakellm.wires.common import (
    LENGTH_REASONS,
    RenderContext,
    StreamPlan,
    WireCodec,
    cache_namespace,
    chunks,
    new_id,
    openai_error_body,
    sse,
)

DONE = b"data: [DONE]\n\n"
FINGERPRINT = "fp_fakellm"
_ALIASES = {"end_turn": "stop", "tool_use": "tool_calls", "refusal": "content_filter"}


class ChatCodec(WireCodec):
    wire = "openai-chat"

    def cache_input(self, body: dict[str, Any]) -> CacheInput:
        inp = CacheInput(namespace=cache_namespace(self.wire, body))
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        # The provider renders leading system/developer messages, then the tools, then the rest.
        lead = 0
        while lead < len(messages) and messages[lead].get("role") in ("system", "developer"):
            lead += 1
        for msg in messages[:lead]:
            inp.elements.append(b"message\0" + canonical(msg))
        for tool in body.get("tools") or []:
            inp.elements.append(b"tool\0" + canonical(tool))
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            inp.elements.append(b"format\0" + canonical(fmt))
        for msg in messages[lead:]:
            inp.elements.append(b"message\0" + canonical(msg))
        return inp

    def validate(self, body: dict[str, Any]) -> str | None:
        for key in ("model", "messages"):
            if key not in body:
                return f"Missing required parameter: '{key}'."
        messages = body["messages"]
        if not isinstance(messages, list):
            return "Invalid type for 'messages': expected an array."
        pending: list[str] = []
        for n, msg in enumerate(messages):
            role = msg.get("role") if isinstance(msg, dict) else None
            if role == "tool":
                call_id = msg.get("tool_call_id") if isinstance(msg, dict) else None
                if call_id not in pending:
                    return (
                        f"Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceeding message with 'tool_calls'. (messages.[{n}])"
                    )
                pending.remove(call_id)
                continue
            if pending:
                return (
                    "An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                    f"response messages: {', '.join(pending)}"
                )
            if role == "assistant" and isinstance(msg, dict):
                pending = [
                    str(c.get("id")) for c in msg.get("tool_calls") or [] if isinstance(c, dict)
                ]
        return None

    def _finish_reason(self, reply: Reply, content: tuple[Item, ...]) -> str:
        if reply.stop_reason is None:
            return "tool_calls" if any(isinstance(i, ToolCall) for i in content) else "stop"
        if reply.stop_reason in LENGTH_REASONS:
            return "length"
        return _ALIASES.get(reply.stop_reason, reply.stop_reason)

    def _usage(self, ctx: RenderContext) -> dict[str, Any]:
        u = ctx.usage
        return {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": u.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _calls(self, content: tuple[Item, ...]) -> list[tuple[ToolCall, str]]:
        return [(i, i.id or new_id("call_")) for i in content if isinstance(i, ToolCall)]

    def render_json(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        texts = [i.text for i in ctx.content if isinstance(i, Text)]
        thoughts = [i.text for i in ctx.content if isinstance(i, Reasoning)]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(texts) if texts else None,
            "refusal": None,
            "annotations": [],
        }
        if thoughts:
            message["reasoning_content"] = "".join(thoughts)
        calls = self._calls(ctx.content)
        if calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for call, call_id in calls
            ]
        return {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": self._finish_reason(reply, ctx.content),
                }
            ],
            "usage": self._usage(ctx),
            "service_tier": "default",
            "system_fingerprint": FINGERPRINT,
        }

    def _chunk(self, ctx: RenderContext, cid: str, choices: list[Any]) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "service_tier": "default",
            "system_fingerprint": FINGERPRINT,
            "choices": choices,
        }
        if _include_usage(ctx.body):
            obj["usage"] = None  # every chunk carries the key; only the last one has figures
        return obj

    def _delta(
        self, ctx: RenderContext, cid: str, delta: dict[str, Any], finish: str | None = None
    ) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse(None, self._chunk(ctx, cid, [choice]))

    def render_stream(self, reply: Reply, ctx: RenderContext) -> StreamPlan:
        cid = ctx.response_id = new_id("chatcmpl-")
        frames = [self._delta(ctx, cid, {"role": "assistant", "content": "", "refusal": None})]
        size = reply.chunk_size
        call_ids = iter(self._calls(ctx.content))
        tool_index = 0
        for item in ctx.content:
            if isinstance(item, Text):
                frames += [self._delta(ctx, cid, {"content": c}) for c in chunks(item.text, size)]
            elif isinstance(item, Reasoning):
                frames += [
                    self._delta(ctx, cid, {"reasoning_content": c}) for c in chunks(item.text, size)
                ]
            else:
                _, call_id = next(call_ids)
                head = {
                    "index": tool_index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": ""},
                }
                frames.append(self._delta(ctx, cid, {"tool_calls": [head]}))
                for c in chunks(item.arguments_text(), size):
                    frag = {"index": tool_index, "function": {"arguments": c}}
                    frames.append(self._delta(ctx, cid, {"tool_calls": [frag]}))
                tool_index += 1
        frames.append(self._delta(ctx, cid, {}, self._finish_reason(reply, ctx.content)))
        tail = 2
        if _include_usage(ctx.body):
            final = self._chunk(ctx, cid, [])
            final["usage"] = self._usage(ctx)
            frames.append(sse(None, final))
            tail += 1
        frames.append(DONE)
        return StreamPlan(frames, tail=tail)

    def stream_error_frames(
        self, err: StreamError, ctx: RenderContext, sequence: int
    ) -> list[bytes]:
        body = openai_error_body(500, err.message)
        body["error"]["type"] = body["error"]["code"] = err.code or "server_error"
        return [sse(None, body)]

    def error_body(self, status: int, message: str | None, request_id: str) -> dict[str, Any]:
        return openai_error_body(status, message)


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True
