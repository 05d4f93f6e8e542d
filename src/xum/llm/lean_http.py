"""A small HTTP/1.1 client on asyncio streams, for the one thing the LLM clients do: POST a JSON
body and read the reply as it arrives.

Why not httpx on this path: importing it costs ~100 ms on these machines (it pulls in
http.client, email, urllib.request and its own CLI) and each request spends ~2 ms of CPU in
httpcore's pool machinery; with a hundred agents in one process both add up. This module keeps
what is specific to xum (the asyncio connections, TLS, the keep-alive pool, gzip and deflate,
connect/read/write timeouts, and messages that say what broke) and leaves the HTTP/1.1 framing
(status line, headers, Content-Length, chunked and read-until-close bodies, interim replies,
keep-alive rules) to h11, the sans-IO library under httpcore and uvicorn. h11 is imported when
the first request is made (or by `xum.llm.http.prewarm`'s thread), not with this module.
Anything this client does not do (proxies in particular) is left to httpx: `xum.llm.http`
chooses this client only when no proxy applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import h11

MAX_HEADER_BYTES = 64 * 1024
READ_SIZE = 64 * 1024
IDLE_KEEPALIVE_S = 60.0
_PASSTHROUGH_AT = 64 * 1024  # bodies this big are written as they are, not copied into the head
# Set once a request has been written out in this process (`xum.llm.http.first_request_sent`).
request_sent = threading.Event()


class HTTPTransportError(Exception):
    """The connection failed or broke before the reply was complete."""


@dataclass(frozen=True, slots=True)
class LeanTimeouts:
    """Seconds allowed to connect, between two reads, and to send a request."""

    connect: float = 10.0
    # Idle time between two reads. None: no timer of its own, for a caller that bounds every
    # wait itself (xum.llm.http does, with the reply clock), saving a timer per chunk.
    read: float | None = 300.0
    write: float = 60.0


@dataclass(slots=True, eq=False)
class _Conn:
    """One pooled keep-alive connection and its h11 state machine."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    http: h11.Connection
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
    _length: int | None = None  # Content-Length, when the body is framed by it
    _received: int = 0
    _done: bool = False
    _decoder: Any = field(default=None)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The decoded body, as it arrives. Raises HTTPTransportError when it is cut short."""
        import h11

        while not self._done:
            event = await self._next_event()
            if type(event) is h11.Data:
                chunk = bytes(event.data)
                self._received += len(chunk)
                if self._decoder is not None:
                    chunk = self._decoder.decompress(chunk)
                if chunk:
                    yield chunk
            elif type(event) is h11.EndOfMessage:
                self._done = True
        if self._decoder is not None:
            tail = self._decoder.flush()
            if tail:
                yield tail

    async def aclose(self) -> None:
        """Give the connection back when the body was read to its end and both sides may go
        on (h11 knows: `Connection: close`, a read-until-close body, HTTP/1.0), else close it."""
        import h11

        conn, self._conn = self._conn, None
        if conn is None:
            return
        http = conn.http
        if self._done and http.our_state is h11.DONE and http.their_state is h11.DONE:
            http.start_next_cycle()
            self._client._release(self._key, conn)
        else:
            conn.close()

    async def _next_event(self) -> Any:
        assert self._conn is not None
        conn = self._conn
        while True:
            try:
                event = conn.http.next_event()
            except Exception as exc:  # h11.RemoteProtocolError: the body broke its framing
                raise HTTPTransportError(self._cut_short(exc)) from exc
            if event is not _need_data():
                return event
            data = await _read(self._client.timeouts.read, conn.reader.read(READ_SIZE))
            conn.http.receive_data(data)  # b"" tells h11 the server closed the connection

    def _cut_short(self, exc: Exception) -> str:
        if self._length is not None and self._received < self._length:
            missing = self._length - self._received
            return f"the connection closed with {missing} bytes of the reply missing"
        if "peer closed" in str(exc):
            return "the connection closed before the reply was complete"
        return f"the reply broke HTTP/1.1 framing ({exc})"


def _need_data() -> Any:
    import h11

    return h11.NEED_DATA


async def _read(timeout: float | None, call: Awaitable[bytes]) -> bytes:
    try:
        if timeout is None:
            return await call
        async with asyncio.timeout(timeout):
            return await call
    except TimeoutError:
        raise HTTPTransportError(f"no data from the server for {timeout:g} s") from None
    except (OSError, asyncio.IncompleteReadError) as exc:
        raise HTTPTransportError(_describe(exc)) from exc


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
        import h11

        scheme, host, port = key
        try:
            async with asyncio.timeout(self.timeouts.connect):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=self._ssl() if scheme == "https" else None,
                    server_hostname=host if scheme == "https" else None,
                    limit=READ_SIZE,
                )
        except TimeoutError:
            raise HTTPTransportError(
                f"could not connect to {host}:{port} within {self.timeouts.connect:g} s"
            ) from None
        except OSError as exc:
            raise HTTPTransportError(
                f"could not connect to {host}:{port}: {_describe(exc)}"
            ) from exc
        http = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
        return _Conn(reader, writer, http)

    def _take_idle(self, key: tuple[str, str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    async def _send(self, url: str, body: bytes, headers: dict[str, str]) -> LeanResponse:
        key, target, host_header = _address(url)
        fields = [("host", host_header), *headers.items(), ("content-length", str(len(body)))]

        # A pooled connection may have been closed by the server while idle; a request that
        # fails before any reply byte on such a connection is retried once on a fresh one.
        conn = self._take_idle(key)
        reused = conn is not None
        while True:
            if conn is None:
                conn = await self._connect(key)
            try:
                return await self._exchange(conn, key, target, fields, body)
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
        self,
        conn: _Conn,
        key: tuple[str, str, int],
        target: str,
        fields: list[tuple[str, str]],
        body: bytes,
    ) -> LeanResponse:
        import h11

        http = conn.http
        try:
            head = http.send(h11.Request(method="POST", target=target, headers=fields))
            data = http.send_with_data_passthrough(h11.Data(data=body)) or []
            end = http.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            # A header value xum was given (providers.jsonc, the environment) that HTTP cannot
            # carry, such as one with a line break.
            raise HTTPTransportError(f"the request cannot be sent: {exc}") from None
        try:
            if len(body) < _PASSTHROUGH_AT:
                conn.writer.write(b"".join([head or b"", *data, end]))
            else:
                conn.writer.writelines([head or b"", *data, end])
            async with asyncio.timeout(self.timeouts.write):
                await conn.writer.drain()
            request_sent.set()
        except TimeoutError:
            raise HTTPTransportError(
                f"could not send the request within {self.timeouts.write:g} s"
            ) from None
        except OSError:
            raise _StaleConnection() from None
        event = await self._reply_head(conn)
        reply_headers: dict[str, str] = {}
        for raw_name, raw_value in event.headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            reply_headers[name] = (
                f"{reply_headers[name]}, {value}" if name in reply_headers else value
            )
        encoding = reply_headers.get("content-encoding", "").lower().strip()
        decoder = None
        if encoding == "gzip":
            decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            decoder = zlib.decompressobj()
        elif encoding not in ("", "identity"):
            raise HTTPTransportError(f"unsupported content-encoding {encoding!r}")
        return LeanResponse(
            status=event.status_code,
            reason=event.reason.decode("latin-1"),
            headers=reply_headers,
            _client=self,
            _key=key,
            _conn=conn,
            _length=_content_length(reply_headers),
            _decoder=decoder,
        )

    async def _reply_head(self, conn: _Conn) -> h11.Response:
        """The final status line and headers; interim replies (100, 103) are skipped."""
        import h11

        http = conn.http
        got_bytes = False
        while True:
            try:
                event = http.next_event()
            except h11.RemoteProtocolError as exc:
                if "too long" in str(exc).lower() or "too large" in str(exc).lower():
                    raise HTTPTransportError("the reply headers are too large") from None
                if not got_bytes:
                    raise _StaleConnection() from None
                raise HTTPTransportError(_head_problem(exc)) from None
            if event is h11.NEED_DATA:
                try:
                    async with asyncio.timeout(self.timeouts.read):
                        data = await conn.reader.read(READ_SIZE)
                except TimeoutError:
                    raise HTTPTransportError(
                        f"no reply from the server within {self.timeouts.read or 0:g} s"
                    ) from None
                except OSError as exc:
                    if not got_bytes:
                        raise _StaleConnection() from exc
                    raise HTTPTransportError(_describe(exc)) from exc
                if not data and not got_bytes:
                    raise _StaleConnection()
                got_bytes = got_bytes or bool(data)
                http.receive_data(data)
                continue
            if type(event) is h11.Response:
                return event
            # h11.InformationalResponse: an interim reply; wait for the real one.


class _StaleConnection(Exception):
    """The connection failed before any byte of a reply: safe to retry on a new one."""


def _head_problem(exc: Exception) -> str:
    text = str(exc)
    if "peer closed" in text or "incomplete" in text.lower():
        return "the connection closed inside the reply headers"
    return f"not a valid HTTP/1.1 reply ({text})"


def _content_length(headers: dict[str, str]) -> int | None:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return None
    raw = headers.get("content-length")
    if raw is None:
        return None
    try:
        return int(raw.split(",")[0].strip())
    except ValueError:
        return None  # h11 has refused such a reply already


@functools.lru_cache(maxsize=256)
def _address(url: str) -> tuple[tuple[str, str, int], str, str]:
    """The pool key (scheme, host, port), the request target and the Host header of `url`.
    A session sends every request to the same few URLs: each is taken apart once (the
    parser's properties parse the address again on every access)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HTTPTransportError(f"not an http(s) URL: {url}")
    host = parts.hostname
    explicit = parts.port
    port = explicit or (443 if scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if ":" not in host else f"[{host}]"
    if explicit:
        host_header += f":{explicit}"
    return (scheme, host, port), target, host_header
