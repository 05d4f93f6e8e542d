"""A small HTTP/1.1 server on asyncio streams: keep-alive, Content-Length or chunked bodies,
and the one thing a general-purpose server will not do, cutting a response off after exactly
N body bytes. A hand-written server keeps per-request overhead in the tens of microseconds,
which matters when a benchmark pushes hundreds of streaming sessions through one instance."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus

MAX_HEAD = 1 << 20  # request line + headers
FLUSH_AT = 1 << 16  # drain the transport once this much is buffered

_REASONS = {529: "Site Overloaded"}


class BadRequest(Exception):
    pass


class Cut(Exception):
    """Raised inside a handler when a scripted disconnect has closed the connection."""


@dataclass(slots=True)
class HttpRequest:
    method: str
    target: str
    headers: dict[str, str]  # lowercased names; repeated headers joined with ", "
    body: bytes
    keep_alive: bool


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _REASONS.get(status, "Unknown")


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None  # the client closed an idle keep-alive connection
        raise BadRequest("truncated request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too large") from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        raise BadRequest(f"bad request line {lines[0]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(f"bad header line {line!r}")
        key, value = name.strip().lower(), value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise BadRequest("bad content-length") from None
        body = await reader.readexactly(length) if length else b""
    return HttpRequest(method, target, headers, body, keep_alive)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise BadRequest("bad chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


class Response:
    """Writes one response. `cut_after(n)` arms a scripted disconnect: the connection closes
    right after the n-th body byte (payload bytes, chunk framing not counted), and `Cut` is
    raised so the handler stops."""

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        reader: asyncio.StreamReader | None = None,
    ) -> None:
        self._writer = writer
        self._reader = reader
        self.keep_alive = keep_alive
        self._budget: int | None = None
        self._reset = False
        self._sent = 0
        self._chunked = False
        self.started = False

    def cut_after(self, n_bytes: int, *, reset: bool = False) -> None:
        self._budget, self._reset = max(0, n_bytes), reset

    async def abort(self, *, reset: bool = False) -> None:
        await _close(self._writer, reset)
        raise Cut

    def _head(self, status: int, headers: Iterable[tuple[str, str]], extra: str) -> bytes:
        lines = [f"HTTP/1.1 {status} {_reason(status)}"]
        lines += [f"{k}: {v}" for k, v in headers]
        lines.append(extra)
        lines.append("connection: keep-alive" if self.keep_alive else "connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _check_open(self) -> None:
        if self._writer.is_closing():
            raise ConnectionResetError("client closed the connection")

    async def send(self, status: int, headers: Iterable[tuple[str, str]], body: bytes) -> None:
        """A whole response with Content-Length."""
        self._check_open()
        self.started = True
        head = self._head(status, headers, f"content-length: {len(body)}")
        if self._budget is not None and self._budget < len(body):
            self._writer.write(head + body[: self._budget])
            await self.abort(reset=self._reset)
        self._writer.write(head + body)
        await self._writer.drain()

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Start a chunked response (used for every event stream)."""
        self._check_open()
        self.started = True
        self._chunked = True
        self._writer.write(self._head(status, headers, "transfer-encoding: chunked"))
        if self._budget == 0:
            await self.abort(reset=self._reset)

    async def chunk(self, data: bytes) -> None:
        if not data:
            return  # an empty chunk would end the body
        self._check_open()
        if self._budget is not None and self._sent + len(data) >= self._budget:
            data = data[: self._budget - self._sent]
            self._sent += len(data)
            if data:
                self._writer.write(b"%x\r\n%b\r\n" % (len(data), data))
            await self.abort(reset=self._reset)
        self._sent += len(data)
        self._writer.write(b"%x\r\n%b\r\n" % (len(data), data))
        transport = self._writer.transport
        if transport.get_write_buffer_size() > FLUSH_AT:
            await self._writer.drain()

    async def send_stream(
        self, status: int, headers: Iterable[tuple[str, str]], frames: list[bytes]
    ) -> None:
        """A whole chunked response in one write (one syscall, not one per event); each frame
        is still its own HTTP chunk. With a disconnect armed, goes frame by frame."""
        if self._budget is not None:
            await self.start(status, headers)
            for frame in frames:
                await self.chunk(frame)
            await self.end()
            return
        self._check_open()
        self.started = self._chunked = True
        parts = [self._head(status, headers, "transfer-encoding: chunked")]
        parts += [b"%x\r\n%b\r\n" % (len(f), f) for f in frames if f]
        parts.append(b"0\r\n\r\n")
        self._writer.write(b"".join(parts))
        await self._writer.drain()

    async def flush(self) -> None:
        await self._writer.drain()

    async def peer_closed(self, timeout: float | None) -> bool:
        """Wait up to `timeout` seconds (None: for ever) for the client to hang up; True when
        it did. The client sends nothing while it waits for this response."""
        if self._reader is None:
            await asyncio.sleep(timeout or 0)
            return False
        try:
            data = await asyncio.wait_for(self._reader.read(1), timeout)
        except TimeoutError:
            return False
        except ConnectionError:
            return True
        return not data

    async def end(self) -> None:
        self._check_open()
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()


async def _close(writer: asyncio.StreamWriter, reset: bool) -> None:
    transport = writer.transport
    if reset:
        # Let what was written reach the socket, then close with RST (SO_LINGER 0).
        for _ in range(200):
            if transport.is_closing() or transport.get_write_buffer_size() == 0:
                break
            await asyncio.sleep(0.005)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
        return
    writer.close()  # FIN after the buffered bytes are flushed
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.wait_closed(), 2)


Handler = Callable[[HttpRequest, Response], Awaitable[None]]
BadRequestHandler = Callable[[str], bytes]


class HttpServer:
    def __init__(self, handler: Handler, on_bad_request: BadRequestHandler) -> None:
        self._handler = handler
        self._on_bad_request = on_bad_request
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.StreamWriter, asyncio.Task[None]] = {}
        self.connections_opened = 0
        self._closing = False

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._serve, host, port, limit=MAX_HEAD)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
        current = asyncio.current_task()
        tasks = [t for t in self._connections.values() if t is not current]
        for writer in list(self._connections):
            writer.transport.abort()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[writer] = task
        self.connections_opened += 1
        try:
            while True:
                try:
                    request = await _read_request(reader, writer)
                except BadRequest as exc:
                    body = self._on_bad_request(str(exc))
                    head = (
                        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
                    )
                    writer.write(head.encode() + body)
                    break
                if request is None:
                    break
                response = Response(writer, request.keep_alive, reader)
                try:
                    await self._handler(request, response)
                except Cut:
                    return
                if not response.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # close() cancels connections. Ending the task normally matters on Python 3.11,
            # whose stream callback calls task.exception() and would raise on a cancelled task.
            if not self._closing:
                raise
        finally:
            self._connections.pop(writer, None)
            if not writer.is_closing():
                await _close(writer, reset=False)
