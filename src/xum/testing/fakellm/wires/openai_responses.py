"""OpenAI Responses: `POST /v1/responses`, JSON or SSE (`event:` + `data:`, `sequence_number`)."""

from __future__ import annotations

from typing import Any

from xum.testing.fakellm.cache import CacheInput
from xum.testing.fakellm.script import Item, Reasoning, Reply, StreamError, Text
from xum.testing.fakellm.tokens import canonical
from xum.testing.fakellm.wires.common import (
    LENGTH_REASONS,
    RenderContext,
    StreamPlan,
    WireCodec,
    cache_namespace,
    chunks,
    dumps,
    fake_encrypted,
    new_id,
    openai_error_body,
)

ENCRYPTED_INCLUDE = "reasoning.encrypted_content"


def _incomplete_reason(reply: Reply) -> str | None:
    reason = reply.stop_reason
    if reason in LENGTH_REASONS:
        return "max_output_tokens"
    if reason in ("content_filter", "refusal"):
        return "content_filter"
    return None


class _Events:
    """Frames with a running `sequence_number`, as the provider numbers them."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        obj = {"type": kind, "sequence_number": len(self.frames), **fields}
        self.frames.append(b"event: " + kind.encode() + b"\ndata: " + dumps(obj) + b"\n\n")


class ResponsesCodec(WireCodec):
    wire = "openai-responses"

    def cache_input(self, body: dict[str, Any]) -> CacheInput:
        inp = CacheInput(namespace=cache_namespace(self.wire, body))
        if isinstance(body.get("instructions"), str):
            inp.elements.append(b"instructions\0" + body["instructions"].encode())
        for tool in body.get("tools") or []:
            inp.elements.append(b"tool\0" + canonical(tool))
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            inp.elements.append(b"format\0" + canonical(fmt))
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        for item in items if isinstance(items, list) else []:
            inp.elements.append(b"item\0" + canonical(item))
        return inp

    def validate(self, body: dict[str, Any]) -> str | None:
        if "model" not in body:
            return "Missing required parameter: 'model'."
        items = body.get("input")
        if not isinstance(items, list) or body.get("previous_response_id"):
            return None
        calls: set[str] = set()
        answered: set[str] = set()
        for item in items:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call":
                calls.add(str(item.get("call_id")))
            elif item.get("type") == "function_call_output":
                call_id = str(item.get("call_id"))
                if call_id not in calls:
                    return f"No tool call found for function call output with call_id {call_id}."
                answered.add(call_id)
        for call_id in sorted(calls - answered):
            return f"No tool output found for function call {call_id}."
        return None

    def visible(
        self, content: tuple[Item, ...], body: dict[str, Any], notes: list[str]
    ) -> tuple[Item, ...]:
        if any(isinstance(i, Reasoning) and i.text for i in content) and not _summaries(body):
            notes.append("reasoning summary dropped: the request did not ask for reasoning.summary")
        return content

    def _output(self, ctx: RenderContext) -> list[dict[str, Any]]:
        """The finished output items, ids included; streaming replays them piece by piece."""
        encrypted = ENCRYPTED_INCLUDE in (ctx.body.get("include") or [])
        summaries = _summaries(ctx.body)
        out: list[dict[str, Any]] = []
        for item in ctx.content:
            if isinstance(item, Text):
                part = {"type": "output_text", "annotations": [], "logprobs": [], "text": item.text}
                out.append(
                    {
                        "id": new_id("msg_"),
                        "type": "message",
                        "status": "completed",
                        "content": [part],
                        "role": "assistant",
                    }
                )
            elif isinstance(item, Reasoning):
                rs: dict[str, Any] = {"id": new_id("rs_"), "type": "reasoning", "summary": []}
                if summaries and item.text:
                    rs["summary"] = [{"type": "summary_text", "text": item.text}]
                if encrypted:
                    value = item.encrypted_content
                    rs["encrypted_content"] = fake_encrypted(item.text) if value is None else value
                out.append(rs)
            else:
                out.append(
                    {
                        "id": new_id("fc_"),
                        "type": "function_call",
                        "status": "completed",
                        "arguments": item.arguments_text(),
                        "call_id": item.id or new_id("call_"),
                        "name": item.name,
                    }
                )
        return out

    def _usage(self, ctx: RenderContext) -> dict[str, Any]:
        u = ctx.usage
        return {
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cache_read},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.input_tokens + u.output_tokens,
        }

    def _response(
        self,
        ctx: RenderContext,
        rid: str,
        status: str,
        output: list[dict[str, Any]],
        usage: dict[str, Any] | None,
        incomplete: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        b = ctx.body
        raw = b.get("reasoning")
        reasoning: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return {
            "id": rid,
            "object": "response",
            "created_at": ctx.created,
            "status": status,
            "background": False,
            "error": error,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": b.get("instructions"),
            "max_output_tokens": b.get("max_output_tokens"),
            "model": ctx.model,
            "output": output,
            "parallel_tool_calls": b.get("parallel_tool_calls", True),
            "previous_response_id": b.get("previous_response_id"),
            "prompt_cache_key": b.get("prompt_cache_key"),
            "reasoning": {
                "effort": reasoning.get("effort"),
                "summary": reasoning.get("summary"),
            },
            "store": b.get("store", True),
            "temperature": b.get("temperature", 1.0),
            "text": b.get("text", {"format": {"type": "text"}}),
            "tool_choice": b.get("tool_choice", "auto"),
            "tools": b.get("tools", []),
            "top_p": b.get("top_p", 1.0),
            "truncation": b.get("truncation", "disabled"),
            "usage": usage,
            "user": b.get("user"),
            "metadata": b.get("metadata", {}),
        }

    def render_json(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        reason = _incomplete_reason(reply)
        return self._response(
            ctx,
            new_id("resp_"),
            "incomplete" if reason else "completed",
            self._output(ctx),
            self._usage(ctx),
            reason,
        )

    def render_stream(self, reply: Reply, ctx: RenderContext) -> StreamPlan:
        rid = ctx.response_id = new_id("resp_")
        output = self._output(ctx)
        ev = _Events()
        ev.add("response.created", response=self._response(ctx, rid, "in_progress", [], None))
        ev.add("response.in_progress", response=self._response(ctx, rid, "in_progress", [], None))
        size = reply.chunk_size
        for oi, (item, done) in enumerate(zip(ctx.content, output, strict=True)):
            iid = done["id"]
            if isinstance(item, Text):
                added = {**done, "status": "in_progress", "content": []}
                ev.add("response.output_item.added", output_index=oi, item=added)
                part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
                where = {"item_id": iid, "output_index": oi, "content_index": 0}
                ev.add("response.content_part.added", **where, part=part)
                for c in chunks(item.text, size):
                    ev.add("response.output_text.delta", **where, delta=c, logprobs=[])
                ev.add("response.output_text.done", **where, text=item.text, logprobs=[])
                ev.add("response.content_part.done", **where, part=done["content"][0])
            elif isinstance(item, Reasoning):
                added = {k: v for k, v in done.items() if k != "summary"}
                ev.add("response.output_item.added", output_index=oi, item={**added, "summary": []})
                if done["summary"]:
                    where = {"item_id": iid, "output_index": oi, "summary_index": 0}
                    empty = {"type": "summary_text", "text": ""}
                    ev.add("response.reasoning_summary_part.added", **where, part=empty)
                    for c in chunks(item.text, size):
                        ev.add("response.reasoning_summary_text.delta", **where, delta=c)
                    ev.add("response.reasoning_summary_text.done", **where, text=item.text)
                    ev.add("response.reasoning_summary_part.done", **where, part=done["summary"][0])
            else:
                added = {**done, "status": "in_progress", "arguments": ""}
                ev.add("response.output_item.added", output_index=oi, item=added)
                where = {"item_id": iid, "output_index": oi}
                for c in chunks(done["arguments"], size):
                    ev.add("response.function_call_arguments.delta", **where, delta=c)
                ev.add(
                    "response.function_call_arguments.done", **where, arguments=done["arguments"]
                )
            ev.add("response.output_item.done", output_index=oi, item=done)
        reason = _incomplete_reason(reply)
        final = self._response(
            ctx, rid, "incomplete" if reason else "completed", output, self._usage(ctx), reason
        )
        ev.add("response.incomplete" if reason else "response.completed", response=final)
        return StreamPlan(ev.frames, tail=1)

    def stream_error_frames(
        self, err: StreamError, ctx: RenderContext, sequence: int
    ) -> list[bytes]:
        code = err.code or "server_error"
        if err.responses_event == "error":
            obj: dict[str, Any] = {
                "type": "error",
                "sequence_number": sequence,
                "code": code,
                "message": err.message,
                "param": None,
            }
            return [b"event: error\ndata: " + dumps(obj) + b"\n\n"]
        failed = self._response(
            ctx,
            ctx.response_id or new_id("resp_"),
            "failed",
            [],
            None,
            error={"code": code, "message": err.message},
        )
        obj = {"type": "response.failed", "sequence_number": sequence, "response": failed}
        return [b"event: response.failed\ndata: " + dumps(obj) + b"\n\n"]

    def error_body(self, status: int, message: str | None, request_id: str) -> dict[str, Any]:
        return openai_error_body(status, message)


def _summaries(body: dict[str, Any]) -> bool:
    reasoning = body.get("reasoning")
    return isinstance(reasoning, dict) and reasoning.get("summary") not in (None, "none")
