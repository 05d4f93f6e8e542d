"""The reply model: what the fake server answers, one request at a time.

A `Reply` is immutable, so one instance can be the default answer for any number of requests.
Exactly one of three modes applies: generated content (`content`, the default), an HTTP error
(`error`) or a byte-for-byte replay of a recorded body (`replay`). Faults (`disconnect`,
`malformed`, `stream_error`) and timing (`delay`, `first_byte_delay`) layer on top.

`script_from_json` / `reply_from_json` read the JSON script format documented in the package
docstring; `reply_to_json` writes it back (used by tests to prove the two stay in step).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack, cast, get_args

import orjson

Wire = Literal["anthropic", "openai-responses", "openai-chat", "gemini"]
WIRES: tuple[Wire, ...] = get_args(Wire)

DEFAULT_CHUNK_SIZE = 16
MALFORMED_FRAME = "data: {not json\n\n"
STREAM_ERROR_MESSAGE = "fakellm: scripted stream error"


class ScriptError(ValueError):
    """A script (Python or JSON) that cannot be used; the message names the offending place."""


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Model reasoning. Anthropic sends it as a `thinking` block (only when the request enables
    thinking), OpenAI Responses as a reasoning item's summary (only when the request asks for a
    summary), Chat Completions as `reasoning_content`.

    `signature` (Anthropic) and `encrypted_content` (Responses, sent only when `include` asks
    for `reasoning.encrypted_content`): None generates a deterministic value; "" sends none.
    """

    text: str
    signature: str | None = None
    encrypted_content: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call. `arguments` as a dict is serialized to JSON; as a str it is sent verbatim,
    which is how a test scripts invalid JSON. `id`: None generates one in the wire's style."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return orjson.dumps(dict(self.arguments)).decode()


Item = Text | Reasoning | ToolCall


@dataclass(frozen=True, slots=True)
class Usage:
    """Usage override. A field left None is computed (see `cache.py`); a number given here is
    written verbatim into the wire's own field, with that wire's meaning: Anthropic's
    `input_tokens` excludes cached tokens, OpenAI's `input_tokens`/`prompt_tokens` include them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error response. `body` None generates the wire's own error JSON for `status`
    (Anthropic `{"type":"error","error":{...}}`, OpenAI `{"error":{...}}`) with `message`."""

    status: int
    body: Mapping[str, Any] | str | None = None
    message: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Close the connection after `after_bytes` bytes of the response body (payload bytes, not
    counting chunked-encoding framing). `reset` sends a TCP RST instead of a FIN (the client may
    then lose bytes it had not read yet). `before_headers` closes without sending anything."""

    after_bytes: int = 0
    reset: bool = False
    before_headers: bool = False


@dataclass(frozen=True, slots=True)
class Malformed:
    """Inject `frame` verbatim after the first `after_event` events of the stream."""

    after_event: int
    frame: str = MALFORMED_FRAME


@dataclass(frozen=True, slots=True)
class StreamError:
    """End an HTTP-200 stream with the wire's in-band error after `after_event` events (None:
    after all content, just before the closing events). Anthropic: `event: error`; Responses:
    `response.failed` (or an `error` event with `responses_event="error"`); Chat: a
    `data: {"error": ...}` chunk. `code` None uses the wire's usual code (overloaded_error /
    server_error)."""

    after_event: int | None = None
    message: str = STREAM_ERROR_MESSAGE
    code: str | None = None
    responses_event: Literal["failed", "error"] = "failed"


@dataclass(frozen=True, slots=True)
class Stall:
    """Stop after the first `after_event` events of a stream and hold the connection open:
    silent, or sending a keep-alive every `keepalive_s` seconds (`keepalive="comment"`: an SSE
    comment line; `"ping"`: Anthropic's `event: ping`). With `seconds` None it holds until the
    client hangs up; otherwise the rest of the stream follows after that long."""

    after_event: int = 0
    keepalive_s: float = 0.0
    keepalive: Literal["comment", "ping"] = "comment"
    seconds: float | None = None

    def keepalive_frame(self) -> bytes:
        if self.keepalive == "ping":
            return b'event: ping\ndata: {"type": "ping"}\n\n'
        return b": keep-alive\n\n"


@dataclass(frozen=True, slots=True)
class Replay:
    """Send `data` as the response body, byte for byte, split into frames at blank lines."""

    data: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    source: str = ""

    @classmethod
    def from_file(cls, path: str | Path, *, status: int = 200) -> Replay:
        p = Path(path)
        return cls(data=p.read_bytes(), status=status, source=str(p))


@dataclass(frozen=True, slots=True)
class Reply:
    content: tuple[Item, ...] = ()
    usage: Usage | None = None
    stop_reason: str | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE  # characters per text/argument delta; 0: one delta
    delay: float = 0.0  # seconds before each streamed event
    byte_delay: float = 0.0  # seconds between two bytes of a stream (a trickle); 0: off
    first_byte_delay: float = 0.0  # seconds before the status line
    error: HttpError | None = None
    replay: Replay | None = None
    disconnect: Disconnect | None = None
    malformed: Malformed | None = None
    stream_error: StreamError | None = None
    stall: Stall | None = None
    wire: Wire | None = None  # answer only this wire; another wire gets a loud 500
    model: str | None = None  # the model echoed in the response (default: the request's)
    headers: Mapping[str, str] = field(default_factory=dict)  # extra response headers
    label: str | None = None  # a name for messages and recordings

    def __post_init__(self) -> None:
        if not isinstance(self.content, tuple):
            object.__setattr__(self, "content", tuple(self.content))
        for item in self.content:
            if not isinstance(item, Text | Reasoning | ToolCall):
                raise ScriptError(f"reply content must be Text, Reasoning or ToolCall: {item!r}")
        if self.error is not None and self.replay is not None:
            raise ScriptError("a reply is an error or a replay, not both")
        if (self.error is not None or self.replay is not None) and self.content:
            raise ScriptError("an error or replay reply has no content")
        if self.wire is not None and self.wire not in WIRES:
            raise ScriptError(f"unknown wire {self.wire!r}; expected one of {', '.join(WIRES)}")
        if self.chunk_size < 0 or self.delay < 0 or self.first_byte_delay < 0:
            raise ScriptError("chunk_size, delay and first_byte_delay must not be negative")
        if self.byte_delay < 0:
            raise ScriptError("byte_delay must not be negative")
        if self.stall is not None and self.error is not None:
            raise ScriptError("an error reply sends no stream to stall")
        if self.stall is not None and (
            self.stall.after_event < 0
            or self.stall.keepalive_s < 0
            or (self.stall.seconds is not None and self.stall.seconds < 0)
        ):
            raise ScriptError("stall.after_event, keepalive_s and seconds must not be negative")

    def describe(self) -> str:
        if self.label:
            return self.label
        if self.error is not None:
            return f"error {self.error.status}"
        if self.replay is not None:
            return f"replay {Path(self.replay.source).name or '<bytes>'}"
        kinds = ", ".join(type(i).__name__.lower() for i in self.content)
        return f"reply [{kinds}]"


# Terse builders ------------------------------------------------------------------------------


class ReplyOptions(TypedDict, total=False):
    usage: Usage | None
    stop_reason: str | None
    chunk_size: int
    delay: float
    byte_delay: float
    first_byte_delay: float
    disconnect: Disconnect | None
    malformed: Malformed | None
    stream_error: StreamError | None
    stall: Stall | None
    wire: Wire | None
    model: str | None
    headers: Mapping[str, str]
    label: str | None


class ErrorOptions(TypedDict, total=False):
    first_byte_delay: float
    disconnect: Disconnect | None
    wire: Wire | None
    label: str | None


class ReplayOptions(ErrorOptions, total=False):
    delay: float
    malformed: Malformed | None
    stall: Stall | None
    headers: Mapping[str, str]


def reply(*content: Item | str, **options: Unpack[ReplyOptions]) -> Reply:
    """A reply with these items in order; a plain str is a `Text`."""
    items = tuple(Text(c) if isinstance(c, str) else c for c in content)
    return Reply(content=items, **options)


def text(value: str, **options: Unpack[ReplyOptions]) -> Reply:
    return reply(Text(value), **options)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    id: str | None = None,
    **options: Unpack[ReplyOptions],
) -> Reply:
    return reply(ToolCall(name, {} if arguments is None else arguments, id), **options)


def error(
    status: int,
    body: Mapping[str, Any] | str | None = None,
    *,
    message: str | None = None,
    headers: Mapping[str, str] | None = None,
    retry_after: float | None = None,
    **options: Unpack[ErrorOptions],
) -> Reply:
    hdrs = dict(headers or {})
    if retry_after is not None:
        hdrs["retry-after"] = f"{retry_after:g}"
    return Reply(error=HttpError(status, body, message, hdrs), **options)


def rate_limited(retry_after: float = 1, **options: Unpack[ErrorOptions]) -> Reply:
    return error(429, retry_after=retry_after, **options)


def overloaded(**options: Unpack[ErrorOptions]) -> Reply:
    """Anthropic's 529 with `{"type":"error","error":{"type":"overloaded_error",...}}`."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return error(529, body, **options)


def replay(path: str | Path, **options: Unpack[ReplayOptions]) -> Reply:
    return Reply(replay=Replay.from_file(path), **options)


# JSON script format --------------------------------------------------------------------------


@dataclass(slots=True)
class Script:
    replies: list[Reply] = field(default_factory=list)
    default: Reply | None = None
    models: list[str] | None = None
    cache: dict[str, int] = field(default_factory=dict)


_REPLY_KEYS = {
    "content",
    "text",
    "usage",
    "stop_reason",
    "chunk_size",
    "delay",
    "byte_delay",
    "first_byte_delay",
    "error",
    "replay",
    "disconnect",
    "malformed",
    "stream_error",
    "stall",
    "wire",
    "model",
    "headers",
    "label",
}


def _obj(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScriptError(f"{where}: expected an object, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
    return value


def _typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    # bool is an int in Python; a JSON `true` where a number belongs is a script mistake.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ScriptError(f"{where}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def _opt_str(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    return None if value is None else cast(str, _typed(value, str, f"{where}.{key}"))


def _item_from_json(data: Any, where: str) -> Item:
    if isinstance(data, str):
        return Text(data)
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "text":
        d = _obj(data, where, {"type", "text"})
        return Text(_typed(d.get("text"), str, f"{where}.text"))
    if kind == "reasoning":
        d = _obj(data, where, {"type", "text", "signature", "encrypted_content"})
        return Reasoning(
            _typed(d.get("text", ""), str, f"{where}.text"),
            signature=_opt_str(d, "signature", where),
            encrypted_content=_opt_str(d, "encrypted_content", where),
        )
    if kind == "tool_call":
        d = _obj(data, where, {"type", "name", "arguments", "id"})
        args = d.get("arguments", {})
        _typed(args, (dict, str), f"{where}.arguments")
        return ToolCall(_typed(d.get("name"), str, f"{where}.name"), args, _opt_str(d, "id", where))
    raise ScriptError(f"{where}: content item type must be text, reasoning or tool_call")


def _int_map(data: Any, where: str, allowed: set[str]) -> dict[str, int]:
    d = _obj(data, where, allowed)
    return {k: _typed(v, int, f"{where}.{k}") for k, v in d.items() if v is not None}


def reply_from_json(data: Any, *, base_dir: Path | None = None, where: str = "reply") -> Reply:
    """One reply from its JSON form. `replay` paths are relative to `base_dir`."""
    if isinstance(data, str):
        return text(data)
    d = _obj(data, where, _REPLY_KEYS)
    items: list[Item] = []
    if "text" in d:
        items.append(Text(_typed(d["text"], str, f"{where}.text")))
    for i, raw in enumerate(_typed(d.get("content", []), list, f"{where}.content")):
        items.append(_item_from_json(raw, f"{where}.content[{i}]"))
    kw: dict[str, Any] = {"content": tuple(items)}
    if "usage" in d:
        kw["usage"] = Usage(**_int_map(d["usage"], f"{where}.usage", set(Usage.__slots__)))
    for key in ("stop_reason", "wire", "model", "label"):
        kw[key] = _opt_str(d, key, where)
    if "chunk_size" in d:
        kw["chunk_size"] = _typed(d["chunk_size"], int, f"{where}.chunk_size")
    for key in ("delay", "byte_delay", "first_byte_delay"):
        if key in d:
            kw[key] = float(_typed(d[key], (int, float), f"{where}.{key}"))
    if "headers" in d:
        kw["headers"] = _str_map(d["headers"], f"{where}.headers")
    if "error" in d:
        e = _obj(d["error"], f"{where}.error", {"status", "body", "message", "headers"})
        body = e.get("body")
        if body is not None:
            _typed(body, (dict, str), f"{where}.error.body")
        kw["error"] = HttpError(
            _typed(e.get("status"), int, f"{where}.error.status"),
            body,
            _opt_str(e, "message", f"{where}.error"),
            _str_map(e.get("headers", {}), f"{where}.error.headers"),
        )
    if "replay" in d:
        r = d["replay"]
        r = {"path": r} if isinstance(r, str) else r
        r = _obj(r, f"{where}.replay", {"path", "status", "content_type"})
        path = Path(_typed(r.get("path"), str, f"{where}.replay.path"))
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise ScriptError(f"{where}.replay.path: no such file: {path}")
        kw["replay"] = Replay(
            data=path.read_bytes(),
            status=_typed(r.get("status", 200), int, "status"),
            content_type=_typed(
                r.get("content_type", "text/event-stream"), str, f"{where}.replay.content_type"
            ),
            source=str(path),
        )
    if "disconnect" in d:
        x = _obj(d["disconnect"], f"{where}.disconnect", {"after_bytes", "reset", "before_headers"})
        kw["disconnect"] = Disconnect(
            _typed(x.get("after_bytes", 0), int, f"{where}.disconnect.after_bytes"),
            _typed(x.get("reset", False), bool, f"{where}.disconnect.reset"),
            _typed(x.get("before_headers", False), bool, f"{where}.disconnect.before_headers"),
        )
    if "malformed" in d:
        m = _obj(d["malformed"], f"{where}.malformed", {"after_event", "frame"})
        kw["malformed"] = Malformed(
            _typed(m.get("after_event"), int, f"{where}.malformed.after_event"),
            _typed(m.get("frame", MALFORMED_FRAME), str, f"{where}.malformed.frame"),
        )
    if "stream_error" in d:
        s = _obj(
            d["stream_error"],
            f"{where}.stream_error",
            {"after_event", "message", "code", "responses_event"},
        )
        after = s.get("after_event")
        event = s.get("responses_event", "failed")
        if event not in ("failed", "error"):
            raise ScriptError(f"{where}.stream_error.responses_event: 'failed' or 'error'")
        kw["stream_error"] = StreamError(
            None if after is None else _typed(after, int, f"{where}.stream_error.after_event"),
            _typed(s.get("message", STREAM_ERROR_MESSAGE), str, f"{where}.stream_error.message"),
            _opt_str(s, "code", f"{where}.stream_error"),
            event,
        )
    if "stall" in d:
        x = _obj(
            d["stall"], f"{where}.stall", {"after_event", "keepalive_s", "keepalive", "seconds"}
        )
        keepalive = x.get("keepalive", "comment")
        if keepalive not in ("comment", "ping"):
            raise ScriptError(f"{where}.stall.keepalive: 'comment' or 'ping'")
        seconds = x.get("seconds")
        kw["stall"] = Stall(
            _typed(x.get("after_event", 0), int, f"{where}.stall.after_event"),
            float(_typed(x.get("keepalive_s", 0), (int, float), f"{where}.stall.keepalive_s")),
            keepalive,
            None
            if seconds is None
            else float(_typed(seconds, (int, float), f"{where}.stall.seconds")),
        )
    try:
        return Reply(**kw)
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def _str_map(data: Any, where: str) -> dict[str, str]:
    d = _typed(data, dict, where)
    return {str(k): _typed(v, str, f"{where}.{k}") for k, v in d.items()}


def script_from_json(data: Any, *, base_dir: Path | None = None) -> Script:
    """A whole script: either a list of replies or an object with `replies`, `default`,
    `models` and `cache` (CacheConfig field names)."""
    if isinstance(data, list):
        data = {"replies": data}
    d = _obj(data, "script", {"replies", "default", "models", "cache"})
    raw_replies = _typed(d.get("replies", []), list, "script.replies")
    script = Script(
        replies=[
            reply_from_json(r, base_dir=base_dir, where=f"replies[{i}]")
            for i, r in enumerate(raw_replies)
        ]
    )
    if d.get("default") is not None:
        script.default = reply_from_json(d["default"], base_dir=base_dir, where="default")
    if "models" in d:
        models = _typed(d["models"], list, "script.models")
        script.models = [_typed(m, str, "script.models[]") for m in models]
    if "cache" in d:
        from xum.testing.fakellm.cache import CacheConfig

        script.cache = _int_map(d["cache"], "script.cache", set(CacheConfig.__slots__))
    return script


def load_script(path: str | Path) -> Script:
    p = Path(path)
    try:
        data = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ScriptError(f"{p}: not valid JSON: {exc}") from None
    return script_from_json(data, base_dir=p.parent)


def _item_to_json(item: Item) -> dict[str, Any]:
    if isinstance(item, Text):
        return {"type": "text", "text": item.text}
    if isinstance(item, Reasoning):
        out: dict[str, Any] = {"type": "reasoning", "text": item.text}
        if item.signature is not None:
            out["signature"] = item.signature
        if item.encrypted_content is not None:
            out["encrypted_content"] = item.encrypted_content
        return out
    args = item.arguments if isinstance(item.arguments, str) else dict(item.arguments)
    call: dict[str, Any] = {"type": "tool_call", "name": item.name, "arguments": args}
    if item.id is not None:
        call["id"] = item.id
    return call


def reply_to_json(r: Reply) -> dict[str, Any]:
    """The JSON form of a reply (replays are written as their source path)."""
    out: dict[str, Any] = {}
    if r.content:
        out["content"] = [_item_to_json(i) for i in r.content]
    if r.usage is not None:
        out["usage"] = {k: getattr(r.usage, k) for k in Usage.__slots__ if getattr(r.usage, k)}
    for key in ("stop_reason", "wire", "model", "label"):
        if getattr(r, key) is not None:
            out[key] = getattr(r, key)
    if r.chunk_size != DEFAULT_CHUNK_SIZE:
        out["chunk_size"] = r.chunk_size
    for key in ("delay", "byte_delay", "first_byte_delay"):
        if getattr(r, key):
            out[key] = getattr(r, key)
    if r.headers:
        out["headers"] = dict(r.headers)
    if r.error is not None:
        e = r.error
        err: dict[str, Any] = {"status": e.status}
        if e.body is not None:
            err["body"] = e.body if isinstance(e.body, str) else dict(e.body)
        if e.message is not None:
            err["message"] = e.message
        if e.headers:
            err["headers"] = dict(e.headers)
        out["error"] = err
    if r.replay is not None:
        out["replay"] = {
            "path": r.replay.source,
            "status": r.replay.status,
            "content_type": r.replay.content_type,
        }
    if r.disconnect is not None:
        dc = r.disconnect
        out["disconnect"] = {
            "after_bytes": dc.after_bytes,
            "reset": dc.reset,
            "before_headers": dc.before_headers,
        }
    if r.malformed is not None:
        out["malformed"] = {"after_event": r.malformed.after_event, "frame": r.malformed.frame}
    if r.stream_error is not None:
        se = r.stream_error
        out["stream_error"] = {
            "after_event": se.after_event,
            "message": se.message,
            "code": se.code,
            "responses_event": se.responses_event,
        }
    if r.stall is not None:
        st = r.stall
        out["stall"] = {
            "after_event": st.after_event,
            "keepalive_s": st.keepalive_s,
            "keepalive": st.keepalive,
            "seconds": st.seconds,
        }
    return out
