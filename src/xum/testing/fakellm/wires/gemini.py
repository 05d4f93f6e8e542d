"""The Gemini API: `POST /v1beta/models/{model}:generateContent` (one JSON answer) and
`:streamGenerateContent?alt=sse` (`data:` frames, each a partial answer). The model is in the
path, not the body; a tool call is a `functionCall` part, its result a `functionResponse` part
of the next user turn; thoughts are parts with `thought: true`."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from xum.testing.fakellm.cache import CacheInput
from xum.testing.fakellm.script import Reasoning, Reply, StreamError, Text
from xum.testing.fakellm.tokens import canonical
from xum.testing.fakellm.wires.common import (
    LENGTH_REASONS,
    RenderContext,
    StreamPlan,
    WireCodec,
    chunks,
    dumps,
    new_id,
)

PREFIX = "/v1beta/models/"
METHODS = {"generateContent": False, "streamGenerateContent": True}  # method -> streams

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def parse_path(path: str) -> tuple[str, bool] | None:
    """(model, streams) of a Gemini model call's path, or None for another path."""
    if not path.startswith(PREFIX):
        return None
    model, _, method = path.removeprefix(PREFIX).rpartition(":")
    if not model or method not in METHODS:
        return None
    return model, METHODS[method]


def _finish(reply: Reply) -> str:
    if reply.stop_reason in LENGTH_REASONS:
        return "MAX_TOKENS"
    if reply.stop_reason in ("content_filter", "refusal"):
        return "SAFETY"
    return "STOP"


def _sse(obj: Any) -> bytes:
    return b"data: " + dumps(obj) + b"\r\n\r\n"


class GeminiCodec(WireCodec):
    wire = "gemini"
    request_id_header = "x-goog-request-id"

    def cache_input(self, body: dict[str, Any]) -> CacheInput:
        inp = CacheInput(namespace=f"{self.wire}\0{body.get('model') or ''}")
        system = body.get("systemInstruction")
        if system is not None:
            inp.elements.append(b"system\0" + canonical(system))
        for tool in body.get("tools") or []:
            inp.elements.append(b"tool\0" + canonical(tool))
        for content in body.get("contents") or []:
            inp.elements.append(b"content\0" + canonical(content))
        return inp

    def validate(self, body: dict[str, Any]) -> str | None:
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        for content in contents:
            if not isinstance(content, dict) or not content.get("parts"):
                return "* GenerateContentRequest.contents.parts: contents.parts must not be empty"
        return None

    def _parts(self, ctx: RenderContext) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for item in ctx.content:
            if isinstance(item, Text):
                parts.append({"text": item.text})
            elif isinstance(item, Reasoning):
                if item.text:
                    parts.append({"text": item.text, "thought": True})
            else:
                args: Any = item.arguments
                if isinstance(args, str):  # scripted as text: sent as it parses, else verbatim
                    with contextlib.suppress(orjson.JSONDecodeError):
                        args = orjson.loads(args)
                call = {"name": item.name, "args": dict(args) if isinstance(args, dict) else args}
                if item.id:
                    call["id"] = item.id
                parts.append({"functionCall": call})
        return parts

    def _usage(self, ctx: RenderContext) -> dict[str, Any]:
        u = ctx.usage
        usage = {
            "promptTokenCount": u.input_tokens,
            "candidatesTokenCount": u.output_tokens - u.reasoning_tokens,
            "totalTokenCount": u.input_tokens + u.output_tokens,
        }
        if u.reasoning_tokens:
            usage["thoughtsTokenCount"] = u.reasoning_tokens
        if u.cache_read:
            usage["cachedContentTokenCount"] = u.cache_read
        return usage

    def _answer(
        self, ctx: RenderContext, parts: list[dict[str, Any]], finish: str | None, rid: str
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        return {
            "candidates": [candidate],
            "usageMetadata": self._usage(ctx),
            "modelVersion": ctx.model,
            "responseId": rid,
        }

    def render_json(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        return self._answer(ctx, self._parts(ctx), _finish(reply), new_id("resp_"))

    def render_stream(self, reply: Reply, ctx: RenderContext) -> StreamPlan:
        rid = ctx.response_id = new_id("resp_")
        frames: list[bytes] = []
        size = reply.chunk_size
        parts = self._parts(ctx)
        for part in parts:
            if "functionCall" in part:
                frames.append(_sse(self._answer(ctx, [part], None, rid)))
                continue
            for piece in chunks(part["text"], size):
                frames.append(_sse(self._answer(ctx, [{**part, "text": piece}], None, rid)))
        # The last frame carries the finish reason (with an empty text part, as the API does).
        frames.append(_sse(self._answer(ctx, [{"text": ""}], _finish(reply), rid)))
        return StreamPlan(frames, tail=1)

    def stream_error_frames(
        self, err: StreamError, ctx: RenderContext, sequence: int
    ) -> list[bytes]:
        return [_sse(self.error_body(500, err.message, ctx.response_id))]

    def error_body(self, status: int, message: str | None, request_id: str) -> dict[str, Any]:
        code = _STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
        text = message or f"fakellm: scripted error ({code})"
        return {"error": {"code": status, "message": text, "status": code}}
