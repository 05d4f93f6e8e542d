"""`RemoteInbox` (xum.host.remote_inbox) keeps a server's inbox from its WebSocket messages: an
item reads back as the API wrote it, and a new connection's snapshot removes what left while the
socket was down and adds what came, telling watchers of each change once."""

from __future__ import annotations

from typing import Any

from xum.host.inbox import InboxItem, WorkspaceRef
from xum.host.remote_inbox import RemoteInbox, item_from_json


def item(n: int, kind: str = "turn-ended") -> InboxItem:
    return InboxItem(
        id=f"n-{n}-ws{n}",
        kind=kind,  # type: ignore[arg-type]
        workspace_id=f"ws{n}",
        workspace=WorkspaceRef(f"name{n}", "/p", "parent" if n == 3 else None),
        summary=f"summary {n}",
        since=1_700_000_000.0 + n,
        seq=n,
        actions=("read",),
        detail={"reason": "completed"},
    )


async def no_call(_method: str, _path: str, _body: object) -> dict[str, Any]:
    raise AssertionError("nothing is answered here")


def test_an_item_reads_back_as_the_api_wrote_it() -> None:
    for n in (1, 3):
        assert item_from_json(item(n).to_json()) == item(n)
    assert item_from_json({"kind": "plan"}) is None
    assert item_from_json("not an item") is None


def test_a_new_snapshot_tells_only_what_changed() -> None:
    inbox = RemoteInbox(no_call)
    seen: list[tuple[str, str]] = []
    inbox.watch(lambda change, i: seen.append((change, i.id)))
    inbox.take({"type": "inbox", "items": [item(1).to_json(), item(2).to_json()]})
    inbox.take({"type": "inbox-added", "item": item(3, "held").to_json()})
    inbox.take({"type": "inbox-added", "item": item(3, "held").to_json()})  # again: no news
    inbox.take({"type": "inbox-removed", "id": item(1).id, "workspaceId": "ws1"})
    assert [i.id for i in inbox.items()] == [item(2).id, item(3).id]
    seen.clear()
    # Reconnected: meanwhile 2 left and 4 arrived.
    inbox.take({"type": "inbox", "items": [item(3, "held").to_json(), item(4).to_json()]})
    assert seen == [("removed", item(2).id), ("added", item(4).id)]
    assert len(inbox) == 2 and inbox.snapshots == 2
