"""A request body sent without a length (chunked) past the server's 1 MiB limit is answered 413
with a message naming the limit, as soon as the limit is passed: the server does not wait for
(or hold) the rest. The real `xum server` under uvicorn and a raw socket."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from tests.e2e.cli import XUM

TOKEN = "chunked-test-token-0123456789"
CHUNK = 64 * 1024
MAX_SENT = 100 * 1024 * 1024


@contextmanager
def xum_server() -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen(
        [XUM, "server", "--port", "0", "--auth-token", TOKEN],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on" in first, first + (proc.stderr.read() if proc.stderr else "")
        url = urlsplit(first.split("listening on ", 1)[1].strip())
        assert url.hostname is not None and url.port is not None
        yield url.hostname, url.port
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        assert part, f"the connection closed before a response: {data!r}"
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])
    }
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        part = sock.recv(65536)
        assert part, "the connection closed in the middle of the response"
        body += part
    return status, headers, body


def test_a_chunked_body_over_the_limit_gets_413_before_it_ends() -> None:
    with xum_server() as (host, port):
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(
                (
                    f"POST /api/projects HTTP/1.1\r\nHost: {host}:{port}\r\n"
                    f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n"
                ).encode()
            )
            chunk = f"{CHUNK:x}\r\n".encode() + b"a" * CHUNK + b"\r\n"
            sent = 0
            # Up to 100 MiB, and never the final chunk: a server that waited for the end of the
            # body before answering would never answer.
            while sent < MAX_SENT and not select.select([sock], [], [], 0)[0]:
                try:
                    sock.sendall(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    break
                sent += CHUNK
            status, headers, body = read_response(sock)
        assert status == 413, body
        error = json.loads(body)["error"]
        assert error["code"] == "payload_too_large"
        assert "1 MiB" in error["message"]
        assert headers.get("x-content-type-options") == "nosniff"

        # The server goes on serving.
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(f"GET /api/auth/status HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            status, _, _ = read_response(sock)
        assert status == 200
