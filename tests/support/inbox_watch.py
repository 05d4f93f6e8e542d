"""A WebSocket client of a real `xum server` that keeps the attention inbox as the server tells it
(`inbox`, `inbox-added`, `inbox-removed`; docs/api.md), for tests and the inbox bench."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import orjson


class InboxWatch:
    """The inbox one connected client sees. `arrived[id]`: when (monotonic) its `inbox-added`
    came in."""

    def __init__(self, ws_url: str, token: str | None) -> None:
        self.ws_url = ws_url
        self.token = token
        self.items: dict[str, dict[str, Any]] = {}
        self.arrived: dict[str, float] = {}
        self.removed: list[str] = []
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def __aenter__(self) -> InboxWatch:
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self._ready.wait(), 30)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def wait(self, predicate: Any, timeout: float = 30.0) -> None:
        """Until `predicate(items)` holds (bounded)."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: predicate(self.items))

    async def _run(self) -> None:
        import websockets

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        async with websockets.connect(self.ws_url, additional_headers=headers) as socket:
            await socket.send(orjson.dumps({"type": "inbox-subscribe"}).decode())
            async for raw in socket:
                msg = orjson.loads(raw)
                kind = msg.get("type")
                if kind not in ("inbox", "inbox-added", "inbox-removed"):
                    continue
                now = time.monotonic()
                async with self._changed:
                    if kind == "inbox":
                        self.items = {i["id"]: i for i in msg["items"]}
                        self._ready.set()
                    elif kind == "inbox-added":
                        self.items[msg["item"]["id"]] = msg["item"]
                        self.arrived[msg["item"]["id"]] = now
                    else:
                        self.items.pop(msg["id"], None)
                        self.removed.append(msg["id"])
                    self._changed.notify_all()
