"""The attention inbox of a running `xum server`, followed over its API (docs/inbox.md).

`RemoteInbox` is the list side of `xum.host.inbox.Inbox` for a front-end attached to a server
(the terminal UI): `items()`, `get()`, `watch()`, kept live from the WebSocket's `inbox`
snapshot and its `inbox-added` / `inbox-removed` messages (`RemoteHosts` sends
`inbox-subscribe` on each connection, so a reconnect starts again from a fresh snapshot).
Answers go through the server's `/api/inbox/{id}/...` routes, the same answer paths as the
browser's, and are awaitable here where the in-process inbox's are plain calls. The item leaves
this list when the server says it left (`inbox-removed`), so every client agrees.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast
from urllib.parse import quote

from xum.core.errors import XumError
from xum.host.inbox import Change, InboxError, InboxItem, InboxKind, Watcher, WorkspaceRef

log = logging.getLogger("xum.host.inbox")
MESSAGES = frozenset({"inbox", "inbox-added", "inbox-removed"})


Call = Callable[[str, str, object], Awaitable[dict[str, Any]]]


class RemoteInbox:
    def __init__(self, call: Call) -> None:
        self._call = call
        self._items: dict[str, InboxItem] = {}
        self._watchers: list[Watcher] = []
        self.following = False  # set before the socket opens: `inbox-subscribe` on each hello
        self.snapshots = 0  # how many `inbox` snapshots came (one per connection)

    # The list (as `Inbox` has it) ---------------------------------------------------------

    def items(self) -> list[InboxItem]:
        return sorted(self._items.values(), key=lambda i: (i.since, i.id))

    def get(self, item_id: str) -> InboxItem | None:
        return self._items.get(item_id)

    def __len__(self) -> int:
        return len(self._items)

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    # Answers, through the server's inbox routes ------------------------------------------

    async def approve(self, item_id: str, decision: str, reason: str | None = None) -> bool:
        body: dict[str, Any] = {"decision": decision}
        if reason:
            body["reason"] = reason
        return await self._act(item_id, "approve", body)

    async def answer(self, item_id: str, answers: Mapping[str, str] | None) -> bool:
        return await self._act(item_id, "answer", {"answers": dict(answers) if answers else None})

    async def dismiss(self, item_id: str) -> bool:
        return await self._act(item_id, "dismiss", None)

    async def read(self, item_id: str) -> bool:
        return await self._act(item_id, "read", None)

    async def _act(self, item_id: str, action: str, body: object) -> bool:
        """True once the server took it; False when the item no longer waits (404); the
        server's own words for an answer that does not fit the item (422) as `InboxError`."""
        try:
            await self._call("POST", f"/api/inbox/{quote(item_id, safe='')}/{action}", body)
        except XumError as exc:
            status = getattr(exc, "status", 0)  # a RemoteError: the server's HTTP status
            if status == 404:
                return False
            if status == 422:
                raise InboxError(exc.message) from None
            raise
        return True

    # The stream (`RemoteHosts` passes every inbox message here) ----------------------------

    def take(self, msg: Mapping[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "inbox":
            self.snapshots += 1
            # A fresh connection's whole list: what left meanwhile goes, what came arrives.
            parsed = (item_from_json(raw) for raw in msg.get("items") or [])
            fresh = {i.id: i for i in parsed if i is not None}
            for item_id in [i for i in self._items if i not in fresh]:
                self._tell("removed", self._items.pop(item_id))
            for item in fresh.values():
                self._arrived(item)
        elif kind == "inbox-added":
            if (added := item_from_json(msg.get("item"))) is not None:
                self._arrived(added)
        elif kind == "inbox-removed":
            gone = self._items.pop(str(msg.get("id")), None)
            if gone is not None:
                self._tell("removed", gone)

    def _arrived(self, item: InboxItem) -> None:
        if item.id not in self._items:
            self._items[item.id] = item
            self._tell("added", item)

    def _tell(self, change: Change, item: InboxItem) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(change, item)
            except Exception:
                log.exception("an inbox watcher failed")


def item_from_json(raw: object) -> InboxItem | None:
    """An `InboxItem` as the API writes it (docs/api.md); None for anything malformed."""
    if not isinstance(raw, dict):
        return None
    try:
        parent = raw.get("parentId")
        detail = raw.get("detail")
        return InboxItem(
            id=str(raw["id"]),
            kind=cast(InboxKind, str(raw["kind"])),
            workspace_id=str(raw["workspaceId"]),
            workspace=WorkspaceRef(
                str(raw.get("workspaceName") or raw["workspaceId"]),
                str(raw.get("project") or ""),
                str(parent) if parent else None,
            ),
            summary=str(raw.get("summary") or ""),
            since=float(raw.get("since") or 0) / 1000,
            seq=int(raw.get("seq") or 0),
            actions=tuple(str(a) for a in raw.get("actions") or ()),
            detail=detail if isinstance(detail, dict) else {},
        )
    except (KeyError, TypeError, ValueError):
        return None
