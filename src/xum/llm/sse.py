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
    """Feed byte chunks, get complete `(event, data)` frames back.

    Work is linear in the bytes fed: each chunk is scanned once, and an unfinished line is kept
    as a list of its pieces, joined once when its end arrives (re-joining a growing buffer on
    every chunk made a single 32 MB line cost seconds).
    """

    __slots__ = ("_data", "_event", "_pending", "_pending_size", "_size", "_skip_lf")

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # pieces of the line that has not ended yet
        self._pending_size = 0
        self._skip_lf = False  # the last chunk ended in CR: a LF first in the next is its pair
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0

    @property
    def unfinished(self) -> int:
        """Bytes of an unfinished line that is not a comment (a big frame still arriving)."""
        if not self._pending or self._pending[0][:1] == b":":
            return 0
        return self._pending_size

    @property
    def partial(self) -> int:
        """Bytes of an event that has begun and not ended (its data lines so far and an
        unfinished line); 0 between events."""
        return self.unfinished + self._size

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        if b"\r" in chunk:
            # CR, LF and CRLF all end a line; a CR at the very end may be half of a CRLF.
            self._skip_lf = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        last = chunk.rfind(b"\n")
        if last == -1:
            self._hold(chunk)
            return []
        lines = chunk[:last].split(b"\n")
        out: list[SSEEvent] = []
        if self._pending:
            first = self._pending[0]
            pieces = self._pending
            pieces.append(lines[0])
            self._pending = []
            self._pending_size = 0
            if len(first) >= 6 and first.startswith(b"data:"):
                # A long data line: strip the field name before the one join, so the payload
                # is copied once, not three times.
                pieces[0] = first[6:] if first[5:6] == b" " else first[5:]
                self._data_value(b"".join(pieces))
                lines = lines[1:]
            else:
                lines[0] = b"".join(pieces)
        for line in lines:
            self._line(line, out)
        if last + 1 < len(chunk):
            self._hold(chunk[last + 1 :])
        return out

    def finish(self) -> list[SSEEvent]:
        """The stream ended: flush a last line and frame that had no terminating blank line."""
        out: list[SSEEvent] = []
        tail = b"".join(self._pending)
        self._pending = []
        self._pending_size = 0
        if tail:
            self._line(tail, out)
        self._line(b"", out)
        return out

    def _hold(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_size += len(piece)
        if self._pending_size > MAX_FRAME_BYTES:
            raise _too_big()

    def _data_value(self, value: bytes) -> None:
        self._size += len(value)
        if self._size > MAX_FRAME_BYTES:
            raise _too_big()
        self._data.append(value)

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
            self._data_value(value)
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
