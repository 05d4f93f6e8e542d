"""Incremental `text/event-stream` parsing on raw bytes.

Why not `httpx_sse.EventSource`: it follows the spec to the letter and drops a final event that
is not closed by a blank line, and real recorded Anthropic streams end exactly that way
(`...data: {"type":"message_stop"}` then EOF). It also decodes every chunk to `str` first; here
the `data` payload stays `bytes` so orjson parses it without an extra copy. The parser is
separate from HTTP, so tests can feed it recorded streams directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from xum.llm.errors import LLMError

# A single frame larger than this is not a reply we can use (the biggest real frames are
# OpenAI `response.completed` events that repeat the whole reply: a few MB at most).
MAX_FRAME_BYTES = 64 * 1024 * 1024

SSEEvent = tuple[str, bytes]  # (event name, data); the name is "" when the frame had none


class SSEParser:
    """Feed byte chunks, get complete `(event, data)` frames back."""

    __slots__ = ("_buf", "_data", "_event", "_size")

    def __init__(self) -> None:
        self._buf = b""
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buf = self._buf + chunk if self._buf else chunk
        if b"\r" in buf:
            # A lone CR at the very end may be the first half of a CRLF split across chunks.
            held = buf.endswith(b"\r")
            if held:
                buf = buf[:-1]
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if held:
                buf += b"\r"
        lines = buf.split(b"\n")
        self._buf = lines.pop()  # the unfinished tail (b"" when the chunk ended on a newline)
        if len(self._buf) > MAX_FRAME_BYTES:
            raise _too_big()
        out: list[SSEEvent] = []
        for line in lines:
            self._line(line, out)
        return out

    def finish(self) -> list[SSEEvent]:
        """The stream ended: flush a last line and frame that had no terminating blank line."""
        out: list[SSEEvent] = []
        tail = self._buf.rstrip(b"\r")
        self._buf = b""
        if tail:
            self._line(tail, out)
        self._line(b"", out)
        return out

    def _line(self, line: bytes, out: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                out.append((self._event, data))
            self._event = ""
            self._data = []
            self._size = 0
            return
        if line[0] == 0x3A:  # ":" starts a comment (keep-alives from many servers)
            return
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._size += len(value)
            if self._size > MAX_FRAME_BYTES:
                raise _too_big()
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        # `id` and `retry` carry nothing the LLM wires use.


def _too_big() -> LLMError:
    return LLMError(
        "invalid_response",
        f"the provider sent a stream frame larger than {MAX_FRAME_BYTES // (1024 * 1024)} MiB",
    )


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    parser = SSEParser()
    async for chunk in chunks:
        for frame in parser.feed(chunk):
            yield frame
    for frame in parser.finish():
        yield frame


def parse_sse_bytes(raw: bytes) -> list[SSEEvent]:
    """Parse a whole recorded stream (tests, fixtures)."""
    parser = SSEParser()
    return parser.feed(raw) + parser.finish()
