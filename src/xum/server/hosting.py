"""The server's workspace hosts: the one host registry (`xum.host.hosts.Hosts`) wired to the
hub, and the lookups its routes share.

Agent sessions run on the server's event loop, all of them. Why one loop: the slow parts of a
turn are kept off it (the engine appends most durable frames on its log thread pool, tools and
hooks are asyncio subprocesses, file reads go to threads; the writer lock is taken on a thread
and the partial message is written on one, see `xum.store.writerlog`), so a turn mostly waits,
and what it computes is short. Sharing the loop makes an event's way to the browsers a plain
function call: the engine's emit reaches the host, whose listener (`xum.server.hostlink`) folds
the event into the hub and queues its JSON for each subscriber, and the WebSocket writers send it
on the same loop. One event-loop thread per session was measured (bench/bench_server.py, 50
workspaces streaming at once) to cost about 40% more server CPU, in GIL hand-offs and
cross-thread wake-ups, with p99 latencies of 10-100 ms where one loop gives 4-7 ms. What blocks
the loop now blocks every workspace: keep it short (move a slow step to `asyncio.to_thread` or
the log's pool). The hub reads each log through its own read-only `SessionLog`, as another
process would, except the frames a live session here has just committed without an event (its
bookkeeping frames), which it takes from that session's log in memory (`Hub.live_log`).

Everything about hosting (open on first send, queue-or-start, the drive loop, goals, reopen
after an outside edit, idle close and idle compaction, pending questions and approvals) is the
host's; the routes turn HTTP into host calls and host errors into API errors.
"""

from __future__ import annotations

from collections.abc import Callable

from xum.core.errors import XumError
from xum.host.hosts import Hosts
from xum.host.inbox import Change, InboxItem
from xum.host.notifications import Notice
from xum.host.workspace_host import HostOptions
from xum.server.errors import ApiError, not_found
from xum.server.hostlink import HubListener
from xum.server.hub import Hub, dumps
from xum.server.pending_approvals import Approvals
from xum.server.questions import Questions
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog, check_workspace_id
from xum.workspaces.safety.choice import SafetyChoice


def server_hosts(
    hub: Hub,
    *,
    idle_close_s: float,
    idle_check_s: float,
    read_seq: Callable[[str], int] | None = None,
) -> Hosts:
    """The server's host registry: a person answers questions and approvals in the browser;
    goals continue; every event goes to the hub."""
    hosts: Hosts | None = None

    def driving(workspace_id: str) -> bool:
        return hosts is not None and hosts.is_driving(workspace_id)

    hosts = Hosts(
        HubListener(hub, driving),
        options=HostOptions(
            frontend="server", purpose="server", safety=SafetyChoice(approval="ask")
        ),
        questions=Questions(hub, driving),
        approvals=Approvals(hub, driving),
        idle_close_s=idle_close_s,
        idle_check_s=idle_check_s,
        read_seq=read_seq,
    )
    hosts.inbox.watch(lambda change, item: broadcast_inbox(hub, change, item))
    hosts.notifier.watch(lambda notice: broadcast_notification(hub, notice))
    hub.active = lambda ws: ws in hosts.hosts

    def live_log(workspace_id: str) -> SessionLog | None:
        host = hosts.hosts.get(workspace_id) if hosts is not None else None
        parts = host.parts if host is not None else None
        return parts.agent.log if parts is not None else None

    hub.live_log = live_log
    hub.queued = hosts.queued
    return hosts


def broadcast_inbox(hub: Hub, change: Change, item: InboxItem) -> None:
    """An inbox item arrived or left: every client that follows the inbox hears it."""
    if change == "added":
        text = dumps({"type": "inbox-added", "item": item.to_json()})
    else:
        text = dumps({"type": "inbox-removed", "id": item.id, "workspaceId": item.workspace_id})
    for client in hub.clients:
        if client.inbox:
            client.outbox.put_control(text)


def broadcast_notification(hub: Hub, notice: Notice) -> None:
    """A notification: every client that shows them hears it (the browser's Notification API)."""
    text = dumps({"type": "notification", "notification": notice.to_json()})
    for client in hub.clients:
        if client.notifications:
            client.outbox.put_control(text)


def require_idle(hosts: Hosts, workspace_id: str, action: str) -> None:
    if hosts.is_running(workspace_id):
        raise ApiError(
            409,
            "conflict",
            f"a turn is running in this workspace; cannot {action} it now",
            "interrupt it first (POST /api/workspaces/{id}/interrupt)",
        )


def workspace_or_404(workspace_id: str) -> WorkspaceRecord:
    try:
        check_workspace_id(workspace_id)
    except XumError:
        raise not_found(f"no workspace with id '{workspace_id[:80]}'") from None
    record = registry.get_workspace(workspace_id)
    if record is None:
        raise not_found(f"no workspace with id '{workspace_id}'", "GET /api/workspaces lists them")
    return record
