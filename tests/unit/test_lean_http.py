"""The lean HTTP/1.1 client against raw servers that control every byte of the reply."""

from __future__ import annotations

import asyncio
import gzip
import shutil
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.certs import make_certs
from xum.llm.http import proxy_for
from xum.llm.lean_http import HTTPTransportError, LeanHTTP, LeanTimeouts

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], "asyncio.Future[None] | object"]


class RawServer:
    """Answers each request with the next raw reply; counts connections."""

    def __init__(
        self, replies: list[bytes | None], *, keep_open: bool = True, hold: bool = False
    ) -> None:
        self.hold = hold  # after the last reply, stay silent until the client hangs up
        self.replies = list(replies)
        self.connections = 0
        self.requests: list[bytes] = []
        self.keep_open = keep_open

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                reply = self.replies.pop(0)
                if reply is None:  # drop the connection without answering
                    break
                writer.write(reply)
                await writer.drain()
                if not self.keep_open:
                    break
            if self.hold:
                await reader.read()  # the end of the client's side: it gave up
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., object]]:
    servers: list[asyncio.AbstractServer] = []

    async def start(raw: RawServer, tls: ssl.SSLContext | None = None) -> int:
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0, ssl=tls)
        servers.append(server)
        return int(server.sockets[0].getsockname()[1])

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def body_of(client: LeanHTTP, url: str) -> tuple[int, bytes]:
    async with client.post(url, b'{"x":1}', {"content-type": "application/json"}) as resp:
        data = b"".join([chunk async for chunk in resp.aiter_bytes()])
        return resp.status, data


def reply(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(h + "\r\n" for h in headers)
    return head.encode() + b"\r\n" + body


async def test_content_length_chunked_and_read_until_close(serve) -> None:  # type: ignore[no-untyped-def]
    chunked = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
    raw = RawServer(
        [
            reply(b"abc", "content-length: 3"),
            reply(chunked, "transfer-encoding: chunked"),
            reply(b"until the end", "connection: close"),
        ]
    )
    port = await serve(raw)
    client = LeanHTTP()
    url = f"http://127.0.0.1:{port}/v1/x?y=1"
    assert await body_of(client, url) == (200, b"abc")
    assert await body_of(client, url) == (200, b"hello world")
    assert await body_of(client, url) == (200, b"until the end")
    assert raw.connections == 1  # keep-alive: all three on one connection
    assert raw.requests[0].startswith(b"POST /v1/x?y=1 HTTP/1.1\r\nhost: 127.0.0.1:")
    await client.aclose()


async def test_a_cut_body_is_a_transport_error(serve) -> None:  # type: ignore[no-untyped-def]
    port = await serve(RawServer([reply(b"ab", "content-length: 10")], keep_open=False))
    with pytest.raises(HTTPTransportError, match="8 bytes of the reply missing"):
        await body_of(LeanHTTP(), f"http://127.0.0.1:{port}/")
    port = await serve(
        RawServer([reply(b"a\r\nxy", "transfer-encoding: chunked")], keep_open=False)
    )
    with pytest.raises(HTTPTransportError):
        await body_of(LeanHTTP(), f"http://127.0.0.1:{port}/")


async def test_gzip_body_is_decoded(serve) -> None:  # type: ignore[no-untyped-def]
    packed = gzip.compress(b"compressed text")
    port = await serve(
        RawServer([reply(packed, "content-encoding: gzip", f"content-length: {len(packed)}")])
    )
    assert await body_of(LeanHTTP(), f"http://127.0.0.1:{port}/") == (200, b"compressed text")


async def test_a_stale_pooled_connection_is_replaced_once(serve) -> None:  # type: ignore[no-untyped-def]
    # The first connection answers once and then closes (like a server's idle timeout).
    raw = RawServer([reply(b"one", "content-length: 3"), None, reply(b"two", "content-length: 3")])
    port = await serve(raw)
    client = LeanHTTP()
    url = f"http://127.0.0.1:{port}/"
    assert await body_of(client, url) == (200, b"one")
    assert await body_of(client, url) == (200, b"two")
    assert raw.connections == 2


async def test_read_timeout_and_refused_connection(serve) -> None:  # type: ignore[no-untyped-def]
    raw = RawServer([reply(b"", "transfer-encoding: chunked")], hold=True)  # headers, silence
    port = await serve(raw)
    client = LeanHTTP(timeouts=LeanTimeouts(read=0.2))
    with pytest.raises(HTTPTransportError, match="no data from the server"):
        await body_of(client, f"http://127.0.0.1:{port}/")
    sock_port = port  # a port nobody listens on: take one and close it
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    sock_port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    with pytest.raises(HTTPTransportError, match="could not connect"):
        await body_of(LeanHTTP(), f"http://127.0.0.1:{sock_port}/")


async def test_interim_replies_are_skipped_and_close_is_honoured(serve) -> None:  # type: ignore[no-untyped-def]
    early = b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"
    raw = RawServer(
        [
            early + reply(b"one", "content-length: 3", "connection: close"),
            reply(b"two", "content-length: 3"),
        ],
        keep_open=False,
    )
    port = await serve(raw)
    client = LeanHTTP()
    url = f"http://127.0.0.1:{port}/"
    assert await body_of(client, url) == (200, b"one")
    assert await body_of(client, url) == (200, b"two")
    assert raw.connections == 2  # `connection: close` is not pooled


async def test_an_http_1_0_reply_is_read_to_the_end_and_not_reused(serve) -> None:  # type: ignore[no-untyped-def]
    raw = RawServer([b"HTTP/1.0 200 OK\r\n\r\nuntil close", reply(b"x", "content-length: 1")])
    raw.keep_open = False
    port = await serve(raw)
    client = LeanHTTP()
    assert await body_of(client, f"http://127.0.0.1:{port}/") == (200, b"until close")
    assert await body_of(client, f"http://127.0.0.1:{port}/") == (200, b"x")
    assert raw.connections == 2


async def test_broken_replies_are_named(serve) -> None:  # type: ignore[no-untyped-def]
    huge = reply(b"", "x-big: " + "a" * 200_000, "content-length: 0")
    cases = [
        (huge, "the reply headers are too large"),
        (b"SPDY/3 200 OK\r\n\r\n", "not a valid HTTP/1.1 reply"),
        (reply(b"zz\r\n", "transfer-encoding: chunked"), "broke HTTP/1.1 framing"),
    ]
    for raw_reply, says in cases:
        port = await serve(RawServer([raw_reply], keep_open=False))
        with pytest.raises(HTTPTransportError, match=says):
            await body_of(LeanHTTP(), f"http://127.0.0.1:{port}/")


async def test_a_header_http_cannot_carry_is_refused_before_sending(serve) -> None:  # type: ignore[no-untyped-def]
    raw = RawServer([reply(b"", "content-length: 0")])
    port = await serve(raw)
    client = LeanHTTP()
    with pytest.raises(HTTPTransportError, match="cannot be sent"):
        async with client.post(f"http://127.0.0.1:{port}/", b"{}", {"x-bad": "a\r\nb: c"}):
            pass
    assert raw.requests == []


@pytest.mark.skipif(
    shutil.which("openssl") is None, reason="needs the openssl CLI for certificates"
)
async def test_tls_verifies_the_certificate(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ca, cert, key = make_certs(tmp_path, host="localhost")
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    port = await serve(RawServer([reply(b"secure", "content-length: 6")]), tls=server_tls)
    trusted = ssl.create_default_context(cafile=str(ca))
    assert await body_of(LeanHTTP(tls=lambda: trusted), f"https://localhost:{port}/") == (
        200,
        b"secure",
    )
    with pytest.raises(HTTPTransportError, match="CERTIFICATE_VERIFY_FAILED"):
        await body_of(LeanHTTP(), f"https://localhost:{port}/")  # system CAs do not know it


def test_proxy_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://api.anthropic.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert proxy_for("https://api.anthropic.com/v1") == "http://proxy:3128"
    assert proxy_for("http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("no_proxy", "localhost,.anthropic.com")
    assert proxy_for("https://api.anthropic.com/v1") is None
    assert proxy_for("https://api.openai.com/v1") == "http://proxy:3128"
    monkeypatch.setenv("ALL_PROXY", "http://all:1")
    assert proxy_for("http://example.com/") == "http://all:1"
