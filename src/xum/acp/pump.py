"""One ordered outbox of `session/update` notifications per session.

The engine emits events synchronously, from inside its turn; ACP notifications are written
asynchronously. The pump sits between them: `push` never blocks the engine, a task sends what
was pushed in order, and `drain` waits until everything pushed so far has been written (a prompt
answers only after its last update, a permission request goes out after its tool call).

Consecutive text chunks of the same kind that piled up while a write was in flight are sent as
one: a fast stream costs fewer, larger messages, and the first chunk still goes out at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from acp.helpers import update_agent_message_text, update_agent_thought_text
from acp.schema import AgentMessageChunk, AgentThoughtChunk, TextContentBlock

from xum.acp.updates import SessionUpdate

log = logging.getLogger("xum.acp")

Send = Callable[[SessionUpdate], Awaitable[None]]


def _text_of(update: SessionUpdate) -> tuple[type, str] | None:
    if isinstance(update, AgentMessageChunk | AgentThoughtChunk) and isinstance(
        update.content, TextContentBlock
    ):
        return type(update), update.content.text
    return None


class UpdatePump:
    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: deque[SessionUpdate] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._broken = False
        self._task = asyncio.create_task(self._run(), name="acp update pump")

    def push(self, updates: Iterable[SessionUpdate]) -> None:
        if self._closed or self._broken:
            return
        added = False
        for update in updates:
            self._queue.append(update)
            added = True
        if added:
            self._idle.clear()
            self._wake.set()

    async def drain(self) -> None:
        """Until every update pushed so far is written (or the connection is gone)."""
        await self._idle.wait()

    async def close(self) -> None:
        """Send what is queued, then stop."""
        await self.drain()
        self._closed = True
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def _next(self) -> SessionUpdate:
        update = self._queue.popleft()
        first = _text_of(update)
        if first is None:
            return update
        kind, text = first
        parts = [text]
        while self._queue:
            more = _text_of(self._queue[0])
            if more is None or more[0] is not kind:
                break
            parts.append(more[1])
            self._queue.popleft()
        if len(parts) == 1:
            return update
        joined = "".join(parts)
        if kind is AgentMessageChunk:
            return update_agent_message_text(joined)
        return update_agent_thought_text(joined)

    async def _run(self) -> None:
        while True:
            if not self._queue:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            update = self._next()
            try:
                await self._send(update)
            except Exception as exc:  # the editor went away: drop the rest, never block a turn
                log.warning("session update not sent (%s); dropping later ones", exc)
                self._broken = True
                self._queue.clear()
