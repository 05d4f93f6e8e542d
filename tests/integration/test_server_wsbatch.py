"""The server's WebSocket protocol writes the frames of one loop iteration together: every
message still arrives, in order, intact, and a close sent right after a burst comes after it."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import uvicorn
import websockets

from xum.server.wsbatch import BatchingWebSocketProtocol

BURSTS = 20
PER_BURST = 50


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    assert scope["type"] == "websocket"
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    n = 0
    for burst in range(BURSTS):
        for _ in range(PER_BURST):  # one loop iteration: written with one send()
            await send({"type": "websocket.send", "text": json.dumps({"n": n, "pad": "é" * n})})
            n += 1
        await send({"type": "websocket.send", "bytes": bytes([burst])})
        await asyncio.sleep(0)
    await send({"type": "websocket.close", "code": 4001, "reason": "done"})


async def test_bursts_arrive_whole_and_in_order_then_the_close() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, ws=BatchingWebSocketProtocol, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        texts: list[dict[str, Any]] = []
        binaries: list[bytes] = []
        async with websockets.connect(f"ws://127.0.0.1:{port}/") as ws:
            try:
                while True:
                    message = await ws.recv()
                    if isinstance(message, bytes):
                        binaries.append(message)
                    else:
                        texts.append(json.loads(message))
            except websockets.ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 4001
        assert [t["n"] for t in texts] == list(range(BURSTS * PER_BURST))
        assert all(t["pad"] == "é" * t["n"] for t in texts)
        assert binaries == [bytes([b]) for b in range(BURSTS)]
    finally:
        server.should_exit = True
        await serving
