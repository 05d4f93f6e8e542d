"""What the three wire modules share: the render context, SSE framing, usage resolution."""

from __future__ import annotations

import base64
import hashlib
import itertools
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from xum.testing.fakellm.cache import CacheInput, CacheUsage
from xum.testing.fakellm.script import (
    Item,
    Reasoning,
    Reply,
    StreamError,
    Text,
    ToolCall,
    Usage,
    Wire,
)
from xum.testing.fakellm.tokens import count

# One counter for the whole process: ids stay unique across resets and across servers, so a
# session that outlives one server never sees two tool calls with the same id.
_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    return f"{prefix}fake{next(_ids):08d}"


def fake_signature(seed: str) -> str:
    digest = hashlib.sha256(b"fakellm-signature\0" + seed.encode()).digest()
    return base64.b64encode(digest * 2).decode()


def fake_encrypted(seed: str) -> str:
    digest = hashlib.sha256(b"fakellm-encrypted\0" + seed.encode()).digest()
    return "gAAAAA" + base64.urlsafe_b64encode(digest * 3).decode()


def chunks(value: str, size: int) -> Iterator[str]:
    """Deltas of `size` characters (0: the whole value as one delta); nothing for ""."""
    if not value:
        return
    step = size or len(value)
    for i in range(0, len(value), step):
        yield value[i : i + step]


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def sse(event: str | None, obj: Any) -> bytes:
    data = b"data: " + dumps(obj) + b"\n\n"
    return b"event: " + event.encode() + b"\n" + data if event else data


@dataclass(slots=True)
class ResolvedUsage:
    """Token figures in the wire's own meaning (see `script.Usage`)."""

    input_tokens: int
    output_tokens: int
    cache_read: int
    cache_write: int
    cache_write_1h: int
    reasoning_tokens: int


def resolve_usage(
    reply: Reply, content: tuple[Item, ...], cache: CacheUsage | None, *, input_excludes_cache: bool
) -> ResolvedUsage:
    reasoning = sum(count(i.text) for i in content if isinstance(i, Reasoning))
    output = reasoning
    for item in content:
        if isinstance(item, Text):
            output += count(item.text)
        elif isinstance(item, ToolCall):
            output += count(item.name + item.arguments_text())
    c = cache or CacheUsage(0, 0, 0, 0, 0)
    prompt = c.uncached_tokens if input_excludes_cache else c.prompt_tokens
    u = reply.usage or Usage()

    def pick(override: int | None, computed: int) -> int:
        return computed if override is None else override

    write = pick(u.cache_write_tokens, c.write_tokens)
    return ResolvedUsage(
        input_tokens=pick(u.input_tokens, prompt),
        output_tokens=pick(u.output_tokens, output),
        cache_read=pick(u.cache_read_tokens, c.read_tokens),
        cache_write=write,
        cache_write_1h=min(write, c.write_1h_tokens),
        reasoning_tokens=pick(u.reasoning_tokens, reasoning),
    )


@dataclass(slots=True)
class RenderContext:
    body: dict[str, Any]
    model: str
    content: tuple[Item, ...]  # the reply's content that this request lets through
    usage: ResolvedUsage
    created: int  # unix seconds
    notes: list[str] = field(default_factory=list)
    response_id: str = ""  # set by a stream render, reused by its in-band error


@dataclass(slots=True)
class StreamPlan:
    frames: list[bytes]
    tail: int  # how many frames at the end close the stream (a stream error goes before them)


LENGTH_REASONS = {"max_tokens", "length", "max_output_tokens"}


class WireCodec(ABC):
    wire: Wire
    input_excludes_cache: bool = False
    request_id_header: str = "x-request-id"

    @abstractmethod
    def cache_input(self, body: dict[str, Any]) -> CacheInput: ...

    @abstractmethod
    def validate(self, body: dict[str, Any]) -> str | None:
        """The provider's 400 message for a request it would reject, else None."""

    def visible(
        self, content: tuple[Item, ...], body: dict[str, Any], notes: list[str]
    ) -> tuple[Item, ...]:
        return content

    def uses_cache_breakpoints(self) -> bool:
        return False

    @abstractmethod
    def render_json(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]: ...

    @abstractmethod
    def render_stream(self, reply: Reply, ctx: RenderContext) -> StreamPlan: ...

    @abstractmethod
    def stream_error_frames(
        self, err: StreamError, ctx: RenderContext, sequence: int
    ) -> list[bytes]: ...

    @abstractmethod
    def error_body(self, status: int, message: str | None, request_id: str) -> dict[str, Any]: ...


_OPENAI_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "fakellm: scripted bad request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached. Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def openai_error_body(status: int, message: str | None, param: str | None = None) -> dict[str, Any]:
    kind, code, default = _OPENAI_ERRORS.get(
        status,
        ("server_error", None, "fakellm: scripted error")
        if status >= 500
        else ("invalid_request_error", None, "fakellm: scripted error"),
    )
    return {"error": {"message": message or default, "type": kind, "param": param, "code": code}}


def cache_namespace(wire: str, body: dict[str, Any]) -> str:
    """OpenAI routes by prefix and `prompt_cache_key`: different keys do not share a cache."""
    return f"{wire}\0{body.get('model')}\0{body.get('prompt_cache_key') or ''}"
