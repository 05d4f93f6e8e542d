"""One WebSocket client's outbound queue: bounded, so a slow client costs bounded memory.

Items are ready-to-send JSON texts tagged with their workspace, or a backlog cursor that turns
log frames into texts only when the writer gets to it (a subscribe from seq 0 on a long session
is one item, not thousands). When the queue is full and another event for workspace W arrives,
every queued item of W is dropped and replaced by one `resync` notice for W; the hub stops
sending W to this client until it subscribes again from the last seq it received. Because only
a suffix of W's stream is cut, the client has a gap-free prefix and resumes exactly after it.

Status notices are coalesced (the latest per workspace wins) and do not count against the
bound; they are few (one per workspace) and small.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator

import orjson

DEFAULT_CAPACITY = 2048


class Backlog:
    """Lazily rendered committed events of one workspace (a subscribe's catch-up)."""

    def __init__(self, workspace_id: str, texts: Iterator[str]) -> None:
        self.workspace_id = workspace_id
        self._texts = texts

    def next_text(self) -> str | None:
        return next(self._texts, None)


Item = tuple[str | None, "str | Backlog"]


class Outbox:
    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        on_overflow: Callable[[str], None] | None = None,
    ) -> None:
        self.capacity = capacity
        self.on_overflow = on_overflow
        self._items: deque[Item] = deque()
        self._statuses: dict[str, str] = {}
        self._control: deque[str] = deque()  # hello, pong, errors, workspaces-changed
        self._wake = asyncio.Event()
        self._lagging: set[str] = set()  # overflowed; nothing more until resume()
        self.closed = False
        self.dropped = 0  # items dropped by overflows, for diagnostics and tests

    def __len__(self) -> int:
        return len(self._items)

    def put(self, workspace_id: str, text: str | Backlog) -> bool:
        """Queue an item of `workspace_id`; False (and a resync queued) when it overflowed."""
        if self.closed or workspace_id in self._lagging:
            return False
        if len(self._items) >= self.capacity:
            self._overflow(workspace_id)
            return False
        self._items.append((workspace_id, text))
        self._wake.set()
        return True

    def put_control(self, text: str) -> None:
        if self.closed:
            return
        if text == _CHANGED and _CHANGED in self._control:
            return
        self._control.append(text)
        self._wake.set()

    def put_status(self, workspace_id: str, text: str) -> None:
        if self.closed:
            return
        self._statuses[workspace_id] = text
        self._wake.set()

    def resume(self, workspace_id: str) -> None:
        """The client subscribed again: accept items of `workspace_id` again."""
        self._lagging.discard(workspace_id)

    def drop_workspace(self, workspace_id: str) -> int:
        """Forget queued items of `workspace_id` (unsubscribe or overflow)."""
        kept = deque(item for item in self._items if item[0] != workspace_id)
        dropped = len(self._items) - len(kept)
        self._items = kept
        return dropped

    def _overflow(self, workspace_id: str) -> None:
        self.dropped += self.drop_workspace(workspace_id) + 1
        self._lagging.add(workspace_id)
        notice = orjson.dumps(
            {"type": "resync", "workspaceId": workspace_id, "reason": "slow-client"}
        ).decode()
        # Appended past the bound on purpose: at most one per workspace, and it must arrive after
        # whatever of that workspace is still queued (nothing, now) and before its next events.
        self._items.append((None, notice))
        self._wake.set()
        if self.on_overflow is not None:
            self.on_overflow(workspace_id)

    def close(self) -> None:
        self.closed = True
        self._items.clear()
        self._statuses.clear()
        self._control.clear()
        self._wake.set()

    async def get(self) -> str | None:
        """The next text to send, waiting for one; None once closed."""
        while True:
            if self.closed:
                return None
            if self._control:
                return self._control.popleft()
            if self._statuses:
                key = next(iter(self._statuses))
                return self._statuses.pop(key)
            while self._items:
                _ws, item = self._items[0]
                if isinstance(item, str):
                    self._items.popleft()
                    return item
                text = item.next_text()
                if text is not None:
                    return text
                self._items.popleft()
            self._wake.clear()
            await self._wake.wait()


_CHANGED = orjson.dumps({"type": "workspaces-changed"}).decode()
WORKSPACES_CHANGED = _CHANGED
