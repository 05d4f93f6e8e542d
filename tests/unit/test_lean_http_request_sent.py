"""`request_sent` (`xum.llm.http.first_request_sent`) is set once a request is written out,
before any reply: what the tool prewarm and the sandbox probe wait for."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import asyncio
from xum.llm.lean_http import LeanHTTP, LeanTimeouts, request_sent

async def main():
    got, release = asyncio.Event(), asyncio.Event()

    async def handle(reader, writer):
        await reader.readuntil(b"\\r\\n\\r\\n")
        got.set()
        await release.wait()
        writer.write(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = LeanHTTP(timeouts=LeanTimeouts(connect=5.0, read=None, write=5.0))
    print("before:", request_sent.is_set())

    async def call():
        async with client.post(f"http://127.0.0.1:{port}/", b"{}", {}) as resp:
            return resp.status

    task = asyncio.create_task(call())
    await got.wait()
    sent = await asyncio.wait_for(asyncio.to_thread(request_sent.wait, 10), 20)
    print("sent before the reply:", sent, not task.done())
    release.set()
    print("status:", await task)
    await client.aclose()
    server.close()

asyncio.run(main())
"""


def test_request_sent_is_set_when_the_request_is_out_before_the_reply() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "before: False",
        "sent before the reply: True True",
        "status: 200",
    ]
