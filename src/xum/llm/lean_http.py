"""A small HTTP/1.1 client on asyncio streams, for the one thing the LLM clients do: POST a JSON
body and read the reply as it arrives.

Why not httpx on this path: importing it costs ~100 ms on these machines (it pulls in
http.client, email, urllib.request and its own CLI) and each request spends ~2 ms of CPU in
httpcore's pool machinery; with a hundred agents in one process both add up. This client does
keep-alive pooling, TLS, Content-Length / chunked / read-until-close bodies, gzip and deflate,
and connect/read/write timeouts. Anything it does not do (proxies in particular) is left to
httpx: `xum.llm.http` chooses this client only when no proxy applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024
MAX_CHUNK_LINE = 4096
READ_SIZE = 64 * 1024
IDLE_KEEPALIVE_S = 60.0


class HTTPTransportError(Exception):
    """The connection failed or broke before the reply was complete."""


@dataclass(frozen=True, slots=True)
class LeanTimeouts:
    """Seconds allowed to connect, between two reads, and to send a request."""

    connect: float = 10.0
    read: float = 300.0  # idle time between two reads
    write: float = 60.0


@dataclass(slots=True, eq=False)
class _Conn:
    """One pooled keep-alive connection."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def usable(self) -> bool:
        return (
            not self.reader.at_eof()
            and not self.writer.is_closing()
            and time.monotonic() - self.idle_since < IDLE_KEEPALIVE_S
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


@dataclass(slots=True, eq=False)
class LeanResponse:
    """The status line and headers of a reply; the body is read with `aiter_bytes()`."""

    status: int
    reason: str
    headers: dict[str, str]  # lowercased names; repeated headers joined with ", "
    _client: LeanHTTP
    _key: tuple[str, str, int]
    _conn: _Conn | None
    _framing: str  # "length", "chunked", "close" or "none"
    _remaining: int = 0
    _done: bool = False
    _decoder: Any = field(default=None)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The decoded body, as it arrives. Raises HTTPTransportError when it is cut short."""
        while not self._done:
            chunk = await self._next_raw()
            if chunk and self._decoder is not None:
                chunk = self._decoder.decompress(chunk)
            if chunk:
                yield chunk
        if self._decoder is not None:
            tail = self._decoder.flush()
            if tail:
                yield tail

    async def aclose(self) -> None:
        """Give the connection back when the body was read to its end, else close it."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and self._framing in ("length", "chunked", "none") and self._keep_alive():
            self._client._release(self._key, conn)
        else:
            conn.close()

    def _keep_alive(self) -> bool:
        return "close" not in self.headers.get("connection", "").lower()

    async def _read(self, call: Callable[[], Any]) -> Any:
        try:
            async with asyncio.timeout(self._client.timeouts.read):
                return await call()
        except TimeoutError:
            raise HTTPTransportError(
                f"no data from the server for {self._client.timeouts.read:g} s"
            ) from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise HTTPTransportError(_describe(exc)) from exc

    async def _next_raw(self) -> bytes:
        assert self._conn is not None
        reader = self._conn.reader
        if self._framing == "none":
            self._done = True
            return b""
        if self._framing == "length":
            if self._remaining == 0:
                self._done = True
                return b""
            data: bytes = await self._read(lambda: reader.read(min(READ_SIZE, self._remaining)))
            if not data:
                raise HTTPTransportError(
                    f"the connection closed with {self._remaining} bytes of the reply missing"
                )
            self._remaining -= len(data)
            if self._remaining == 0:
                self._done = True
            return data
        if self._framing == "close":
            data = await self._read(lambda: reader.read(READ_SIZE))
            if not data:
                self._done = True
            return data
        # chunked
        if self._remaining == 0:
            line = await self._read(lambda: reader.readuntil(b"\n"))
            if len(line) > MAX_CHUNK_LINE:
                raise HTTPTransportError("a chunk header line is too long")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HTTPTransportError(f"bad chunk size {size_text[:20]!r}") from None
            if size == 0:
                while (await self._read(lambda: reader.readuntil(b"\n"))).strip():
                    pass  # trailers
                self._done = True
                return b""
            self._remaining = size
        data = await self._read(lambda: reader.read(min(READ_SIZE, self._remaining)))
        if not data:
            raise HTTPTransportError("the connection closed in the middle of a chunk")
        self._remaining -= len(data)
        if self._remaining == 0:
            await self._read(lambda: reader.readexactly(2))  # the CRLF after the chunk
        return data


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return "the connection closed before the reply was complete"
    if isinstance(exc, ConnectionResetError):
        return "the connection was reset"
    text = str(exc) or type(exc).__name__
    return text


class _Stream:
    """`async with client.post(...) as response:` — closes or pools the connection on exit."""

    def __init__(self, client: LeanHTTP, url: str, body: bytes, headers: dict[str, str]) -> None:
        self._client = client
        self._url = url
        self._body = body
        self._headers = headers
        self._response: LeanResponse | None = None

    async def __aenter__(self) -> LeanResponse:
        self._response = await self._client._send(self._url, self._body, self._headers)
        return self._response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._response is not None:
            await self._response.aclose()


class LeanHTTP:
    """A keep-alive pool of HTTP/1.1 connections. `tls` builds the SSL context on first use."""

    def __init__(
        self,
        *,
        timeouts: LeanTimeouts | None = None,
        tls: Callable[[], Any] | None = None,
        max_idle_per_host: int = 16,
    ) -> None:
        self.timeouts = timeouts or LeanTimeouts()
        self._tls_factory = tls
        self._tls: Any = None
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}
        self._max_idle = max_idle_per_host

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> _Stream:
        return _Stream(self, url, body, headers)

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()

    # Internals ---------------------------------------------------------------------------------

    def _release(self, key: tuple[str, str, int], conn: _Conn) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) >= self._max_idle:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    def _ssl(self) -> Any:
        if self._tls is None:
            if self._tls_factory is not None:
                self._tls = self._tls_factory()
            else:
                import ssl

                self._tls = ssl.create_default_context()
        return self._tls

    async def _connect(self, key: tuple[str, str, int]) -> _Conn:
        scheme, host, port = key
        try:
            async with asyncio.timeout(self.timeouts.connect):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=self._ssl() if scheme == "https" else None,
                    server_hostname=host if scheme == "https" else None,
                    limit=MAX_HEADER_BYTES,
                )
        except TimeoutError:
            raise HTTPTransportError(
                f"could not connect to {host}:{port} within {self.timeouts.connect:g} s"
            ) from None
        except OSError as exc:
            raise HTTPTransportError(
                f"could not connect to {host}:{port}: {_describe(exc)}"
            ) from exc
        return _Conn(reader, writer)

    def _take_idle(self, key: tuple[str, str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    async def _send(self, url: str, body: bytes, headers: dict[str, str]) -> LeanResponse:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise HTTPTransportError(f"not an http(s) URL: {url}")
        host = parts.hostname
        port = parts.port or (443 if scheme == "https" else 80)
        key = (scheme, host, port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host_header = host if ":" not in host else f"[{host}]"
        if parts.port:
            host_header += f":{parts.port}"
        lines = [f"POST {target} HTTP/1.1", f"host: {host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"content-length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

        # A pooled connection may have been closed by the server while idle; a request that
        # fails before any reply byte on such a connection is retried once on a fresh one.
        conn = self._take_idle(key)
        reused = conn is not None
        while True:
            if conn is None:
                conn = await self._connect(key)
            try:
                return await self._exchange(conn, key, head, body)
            except _StaleConnection:
                conn.close()
                if not reused:
                    raise HTTPTransportError(
                        "the server closed the connection without replying"
                    ) from None
                conn, reused = None, False
            except BaseException:
                conn.close()
                raise

    async def _exchange(
        self, conn: _Conn, key: tuple[str, str, int], head: bytes, body: bytes
    ) -> LeanResponse:
        try:
            conn.writer.write(head + body if len(body) < 65536 else head)
            if len(body) >= 65536:
                conn.writer.write(body)
            async with asyncio.timeout(self.timeouts.write):
                await conn.writer.drain()
        except TimeoutError:
            raise HTTPTransportError(
                f"could not send the request within {self.timeouts.write:g} s"
            ) from None
        except OSError:
            raise _StaleConnection() from None
        while True:
            try:
                async with asyncio.timeout(self.timeouts.read):
                    raw = await conn.reader.readuntil(b"\r\n\r\n")
            except TimeoutError:
                raise HTTPTransportError(
                    f"no reply from the server within {self.timeouts.read:g} s"
                ) from None
            except asyncio.IncompleteReadError as exc:
                if not exc.partial:
                    raise _StaleConnection() from None
                raise HTTPTransportError("the connection closed inside the reply headers") from exc
            except asyncio.LimitOverrunError:
                raise HTTPTransportError("the reply headers are too large") from None
            except OSError as exc:
                raise _StaleConnection() from exc
            status, reason, headers = _parse_head(raw)
            if 100 <= status < 200 and status != 101:
                continue  # an interim reply (100 Continue, 103 Early Hints)
            break
        framing, remaining = _framing(status, headers)
        encoding = headers.get("content-encoding", "").lower().strip()
        decoder = None
        if encoding == "gzip":
            decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            decoder = zlib.decompressobj()
        elif encoding not in ("", "identity"):
            raise HTTPTransportError(f"unsupported content-encoding {encoding!r}")
        return LeanResponse(
            status=status,
            reason=reason,
            headers=headers,
            _client=self,
            _key=key,
            _conn=conn,
            _framing=framing,
            _remaining=remaining,
            _done=framing == "none",
            _decoder=decoder,
        )


class _StaleConnection(Exception):
    """The connection failed before any byte of a reply: safe to retry on a new one."""


def _parse_head(raw: bytes) -> tuple[int, str, dict[str, str]]:
    lines = raw.decode("latin-1").split("\r\n")
    status_line = lines[0]
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise HTTPTransportError(f"not an HTTP/1.x reply: {status_line[:60]!r}")
    try:
        status = int(parts[1])
    except ValueError:
        raise HTTPTransportError(f"bad status line {status_line[:60]!r}") from None
    headers: dict[str, str] = {}
    last = ""
    for line in lines[1:]:
        if not line:
            continue
        if line[0] in " \t" and last:  # obsolete line folding
            headers[last] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise HTTPTransportError(f"bad header line {line[:60]!r}")
        last = name.strip().lower()
        value = value.strip()
        headers[last] = f"{headers[last]}, {value}" if last in headers else value
    return status, parts[2] if len(parts) > 2 else "", headers


def _framing(status: int, headers: dict[str, str]) -> tuple[str, int]:
    if status in (204, 304):
        return "none", 0
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return "chunked", 0
    if "content-length" in headers:
        try:
            length = int(headers["content-length"].split(",")[0].strip())
        except ValueError:
            raise HTTPTransportError("bad content-length header") from None
        return ("length", length) if length > 0 else ("none", 0)
    return "close", 0
