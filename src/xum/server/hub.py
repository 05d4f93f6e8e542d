"""Fan-out of workspace event streams to WebSocket clients.

Each workspace that someone looks at (or that runs a turn) has a `Channel`: a read-only view of
its session log (the agent session writes through its own `SessionLog`), the in-flight partial
message (folded from the live deltas), the running calls and their live output so far
(`xum.host.inflight`), the sidebar status, and its subscribers. Everything here
runs on the server's event loop (where the agent sessions run too: their emit calls `publish`
directly) and never awaits while it moves events, so a subscribe (backlog snapshot + partial
snapshot + live output so far + registration) is one atomic step with respect to the events the agent emits: nothing
is missed, nothing is sent twice. Each event is encoded to JSON once, whatever the number of
subscribers.

Committed events carry the log's `seq`. `publish` fills any gap from the log (frames appended
without an event, such as the crash repair `begin_write` performs) before the event itself, so a
subscriber's seqs have no holes. A live session of this process leaves such a gap every step
(`step_start` and `request_header` have no event): its frames are read from that session's log
object in memory (`live_log`), not from the disk; the hub's own view of the log is brought up to
date only on a subscribe, a history read, or for a log that another process writes. Each subscription remembers the last seq its backlog covered
and never gets a committed event at or below it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from xum.engine import events as E
from xum.engine.derive import frame_event
from xum.engine.events import Event
from xum.host.inflight import InFlight
from xum.server.outbox import WORKSPACES_CHANGED, Backlog, Outbox
from xum.store import sessions as session_files
from xum.store.sessionlog import SessionLog, check_workspace_id

IDLE_LOGS_KEPT = 32
POLL_INTERVAL_S = 1.0
LIVE_GRACE_S = 5.0  # a channel that had a live event this recently is not polled


def dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


class Client:
    _ids = itertools.count(1)

    def __init__(self, capacity: int) -> None:
        self.id = next(self._ids)
        self.subscriptions: set[str] = set()
        self.inbox = False  # it asked for the attention inbox's changes (`inbox-subscribe`)
        self.notifications = False  # it shows desktop notifications (`notifications-subscribe`)
        self.outbox = Outbox(capacity)


@dataclass
class PartialState:
    turn_id: str | None
    step: int | None
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        return {
            "text": "".join(self.text),
            "reasoning": "".join(self.reasoning),
            "tool_calls": [dict(c) for _, c in sorted(self.calls.items())],
        }

    def fold(self, event: Event) -> None:
        if isinstance(event, E.TextDelta):
            self.text.append(event.text)
        elif isinstance(event, E.ReasoningDelta):
            self.reasoning.append(event.text)
        elif isinstance(event, E.ToolCallStart):
            self.calls[event.index] = {"id": event.call_id, "name": event.name, "arguments": ""}
        elif isinstance(event, E.ToolCallDelta):
            call = self.calls.get(event.index)
            if call is not None:
                call["arguments"] += event.arguments
        elif isinstance(event, E.DiscardPartial):
            self.text.clear()
            self.reasoning.clear()
            self.calls.clear()


class Channel:
    def __init__(self, workspace_id: str, log: SessionLog) -> None:
        self.workspace_id = workspace_id
        self.log = log
        self.subscribers: dict[Client, int] = {}  # client -> last seq its backlog covered
        self.partial: PartialState | None = None
        self.inflight = InFlight()  # running calls and their live output, for a new subscriber
        self.turn_id: str | None = None
        self.last_published_seq = log.last_seq
        self.live_at = 0.0  # when this process last published a live event of it
        # Status, owned by the session manager (running) and folded from events; the queue
        # counts are the engine's (`Hub.queued`).
        self.running = False  # the session manager drives a turn (or is between queued ones)
        self.turn_open = False  # a turn-start was seen without its turn-end (any driver)
        self.phase: str | None = None
        self.error: dict[str, Any] | None = None
        self.busy_elsewhere = False
        self.last_status: str | None = None

    def fold(self, event: Event) -> None:
        self.inflight.fold(event)
        if isinstance(event, E.TurnStart):
            self.turn_id = event.turn_id
            self.turn_open = True
            self.partial = None
            self.error = None
            self.phase = "model"
        elif isinstance(event, E.StepStart):
            self.partial = PartialState(self.turn_id, event.step)
            self.phase = "model"
        elif isinstance(event, E.AssistantMessage):
            self.partial = None
            if event.tool_calls:
                self.phase = "tools"
        elif isinstance(event, E.ToolCall):
            self.phase = "tools"
        elif isinstance(event, E.CompactionStart):
            self.phase = "compacting"
        elif isinstance(event, E.Compaction):
            self.phase = "model"
        elif isinstance(event, E.TurnEnd):
            self.turn_open = False
            self.partial = None
            self.phase = None
            if event.reason == "error":
                self.error = event.error or {"code": "error", "message": "the turn failed"}
        elif self.partial is not None:
            self.partial.fold(event)


class Hub:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.channels: dict[str, Channel] = {}
        self.clients: set[Client] = set()
        self._loading: dict[str, asyncio.Future[Channel]] = {}
        self.read_seq: Callable[[str], int] = lambda _ws: 0
        self.active: Callable[[str], bool] = lambda _ws: False  # an agent session is open
        # The log object an agent session of this process writes the workspace through (None
        # when none is open here): a gap in its events is filled from its frames in memory.
        self.live_log: Callable[[str], SessionLog | None] = lambda _ws: None
        self.pending_question: Callable[[str], dict[str, Any] | None] = lambda _ws: None
        self.pending_approvals: Callable[[str], list[E.ApprovalRequest]] = lambda _ws: []
        # Messages waiting in the workspace's session: (after the step, after the turn).
        self.queued: Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]] = lambda _ws: (
            (),
            (),
        )
        # Workspaces with a turn open whose log this hub has not loaded (sub-agents run by this
        # process that nobody watches): their sidebar status still shows them streaming.
        self._open_turns: set[str] = set()

    # Channels ---------------------------------------------------------------------------

    async def channel(self, workspace_id: str) -> Channel:
        """The workspace's channel, loading its log (in a thread) the first time."""
        found = self.channels.get(workspace_id)
        if found is not None:
            return found
        check_workspace_id(workspace_id)
        pending = self._loading.get(workspace_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Channel] = asyncio.get_running_loop().create_future()
        self._loading[workspace_id] = future
        try:
            log = await asyncio.to_thread(SessionLog.open, workspace_id, purpose="xum server")
            channel = self.channels.get(workspace_id) or Channel(workspace_id, log)
            self.channels[workspace_id] = channel
            future.set_result(channel)
            return channel
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            self._loading.pop(workspace_id, None)

    def forget(self, workspace_id: str) -> None:
        """Drop a deleted workspace's channel (its subscribers are told to resync)."""
        channel = self.channels.pop(workspace_id, None)
        if channel is None:
            return
        for client in list(channel.subscribers):
            self._drop(client, channel, "deleted")
        channel.log.close()

    # Clients ----------------------------------------------------------------------------

    def connect(self) -> Client:
        client = Client(self.capacity)
        client.outbox.on_overflow = lambda ws: self._overflowed(client, ws)
        self.clients.add(client)
        return client

    def disconnect(self, client: Client) -> None:
        for ws in list(client.subscriptions):
            channel = self.channels.get(ws)
            if channel is not None:
                channel.subscribers.pop(client, None)
        client.subscriptions.clear()
        client.outbox.close()
        self.clients.discard(client)

    async def subscribe(self, client: Client, workspace_id: str, after_seq: int) -> None:
        channel = await self.channel(workspace_id)
        if client not in self.clients:
            return  # it went away while the log loaded
        # From here to the end: no await. Backlog, partial and registration are one step.
        if client in channel.subscribers:
            client.outbox.drop_workspace(workspace_id)
        client.outbox.resume(workspace_id)
        self._catch_up(channel)
        if after_seq > channel.last_published_seq:
            # The client has read frames whose appends have not returned yet (a history page
            # read from the log a moment before): publish them now, so that the partial below
            # is never the reply the client already has as a committed message.
            self._fill(channel, after_seq + 1)
        # Committed events up to the last one this loop has published: later frames may be in
        # the log already (appended on a worker thread), but their events are published when the
        # append returns and reach this subscriber live, in order, after the partial they
        # complete.
        log = channel.log
        last = channel.last_published_seq
        frames = log.frames_after(after_seq) if after_seq < last else []
        if frames:
            client.outbox.put(
                workspace_id, Backlog(workspace_id, _render(workspace_id, frames, last))
            )
        partial = self._partial_message(channel)
        if partial is not None:
            client.outbox.put(workspace_id, dumps(partial))
        # The running calls and what they printed so far (a reload shows the whole output).
        for event in channel.inflight.snapshot():
            client.outbox.put(workspace_id, _event_text(workspace_id, event))
        question = self.pending_question(workspace_id)
        if question is not None:
            client.outbox.put(workspace_id, dumps(question))
        for request in self.pending_approvals(workspace_id):  # not replayed: sent again
            client.outbox.put(workspace_id, _event_text(workspace_id, request))
        client.outbox.put(
            workspace_id,
            dumps(
                {
                    "type": "subscribed",
                    "workspaceId": workspace_id,
                    "lastSeq": last,
                    "status": self.status(workspace_id),
                }
            ),
        )
        channel.subscribers[client] = max(last, after_seq)
        client.subscriptions.add(workspace_id)

    def unsubscribe(self, client: Client, workspace_id: str) -> None:
        channel = self.channels.get(workspace_id)
        if channel is not None:
            channel.subscribers.pop(client, None)
        client.subscriptions.discard(workspace_id)
        client.outbox.drop_workspace(workspace_id)

    def _partial_message(self, channel: Channel) -> dict[str, Any] | None:
        ws = channel.workspace_id
        if channel.partial is not None:
            return {
                "type": "partial",
                "workspaceId": ws,
                "afterSeq": channel.last_published_seq,
                "message": channel.partial.snapshot(),
                "turnId": channel.partial.turn_id,
                "step": channel.partial.step,
            }
        if channel.busy_elsewhere:  # another process streams: its partial file is the source
            partial = channel.log.read_partial()
            if partial is not None and partial.after_seq == channel.log.last_seq:
                data = partial.data
                return {
                    "type": "partial",
                    "workspaceId": ws,
                    "afterSeq": partial.after_seq,
                    "message": {
                        "text": str(data.get("text", "")),
                        "reasoning": str(data.get("reasoning", "")),
                        "tool_calls": list(data.get("tool_calls", [])),
                    },
                    "turnId": None,
                    "step": None,
                }
        return None

    def send_to_subscribers(self, workspace_id: str, text: str) -> None:
        channel = self.channels.get(workspace_id)
        if channel is not None:
            for client in list(channel.subscribers):
                client.outbox.put(workspace_id, text)

    def _overflowed(self, client: Client, workspace_id: str) -> None:
        channel = self.channels.get(workspace_id)
        if channel is not None:
            channel.subscribers.pop(client, None)
        client.subscriptions.discard(workspace_id)

    def _drop(self, client: Client, channel: Channel, reason: str) -> None:
        channel.subscribers.pop(client, None)
        client.subscriptions.discard(channel.workspace_id)
        client.outbox.drop_workspace(channel.workspace_id)
        client.outbox.put_control(
            dumps({"type": "resync", "workspaceId": channel.workspace_id, "reason": reason})
        )

    # Publishing -------------------------------------------------------------------------

    def publish(self, workspace_id: str, event: Event) -> None:
        """Send one engine event to the workspace's subscribers (called by the agent's emit)."""
        channel = self.channels.get(workspace_id)
        if channel is None:
            if isinstance(event, E.TurnStart | E.TurnEnd):
                if isinstance(event, E.TurnStart):
                    self._open_turns.add(workspace_id)
                else:
                    self._open_turns.discard(workspace_id)
                self.status_changed(workspace_id)
            return
        channel.live_at = time.monotonic()
        seq = event.seq if isinstance(event, E.Committed) else None
        if isinstance(seq, int):
            if seq <= channel.last_published_seq:
                return  # already sent (from the log, by a gap fill)
            if seq > channel.last_published_seq + 1:
                self._fill(channel, seq)
            channel.last_published_seq = seq
        channel.fold(event)
        if channel.subscribers:
            text = _event_text(workspace_id, event)
            for client, covered in list(channel.subscribers.items()):
                if seq is None or seq > covered:
                    client.outbox.put(workspace_id, text)
        if isinstance(event, _STATUS_EVENTS):
            self.status_changed(workspace_id)

    def _fill(self, channel: Channel, before_seq: int) -> None:
        """Publish committed frames between the last published seq and `before_seq`."""
        source = self._gap_source(channel, before_seq)
        for frame in source.frames_after(channel.last_published_seq):
            if frame.seq is None or frame.seq >= before_seq:
                break
            channel.last_published_seq = frame.seq
            event = frame_event(frame)
            if event is not None:
                self._send_committed(channel, event, frame.seq)

    def _gap_source(self, channel: Channel, before_seq: int) -> SessionLog:
        """Where the frames of a gap are read. A live session of this process leaves one
        every step (its bookkeeping frames, `step_start` and `request_header`, have no event)
        and has the frames in memory, committed: reading them there spares the disk read and
        decoding of the hub's own view on every step. That view is brought up to date only
        when someone needs it (a subscribe, a history read, a log another process writes)."""
        live = self.live_log(channel.workspace_id)
        if live is not None and live.last_seq >= before_seq - 1:
            return live
        if channel.log.last_seq < before_seq - 1:
            # Written through another log object (a sub-agent's, another process's): read them.
            with contextlib.suppress(Exception):
                channel.log.refresh()
        return channel.log

    def _send_committed(self, channel: Channel, event: Event, seq: int) -> None:
        channel.fold(event)
        if not channel.subscribers:
            return
        text = _event_text(channel.workspace_id, event)
        for client, covered in list(channel.subscribers.items()):
            if seq > covered:
                client.outbox.put(channel.workspace_id, text)

    def _live(self, channel: Channel) -> bool:
        """Events of this workspace arrive live (a session of this process drives it)."""
        recent = time.monotonic() - channel.live_at < LIVE_GRACE_S
        return self.active(channel.workspace_id) or recent

    def _catch_up(self, channel: Channel) -> None:
        """Read what the log gained. Frames another process (say `xum run`) committed are
        published from it; those of a live session here are left to their live events."""
        result = channel.log.refresh()
        if result == "reloaded":
            self._reloaded(channel)
        elif not self._live(channel) and channel.log.last_seq > channel.last_published_seq:
            self._fill(channel, channel.log.last_seq + 1)

    def _sync_external(self, channel: Channel) -> None:
        result = channel.log.refresh()
        if result == "appended":
            self._fill(channel, channel.log.last_seq + 1)
        elif result == "reloaded":
            self._reloaded(channel)

    def _reloaded(self, channel: Channel) -> None:
        """The log changed other than by appends: every subscriber starts over."""
        channel.last_published_seq = channel.log.last_seq
        channel.partial = None
        channel.inflight.clear()
        for client in list(channel.subscribers):
            self._drop(client, channel, "log-reloaded")

    def poll_one(self, channel: Channel) -> None:
        """Bring one channel's log up to date with the disk (before a history read)."""
        with contextlib.suppress(Exception):
            self._catch_up(channel)

    def poll_external(self) -> None:
        """Periodically: follow logs written by other processes, refresh lock state."""
        for ws, channel in list(self.channels.items()):
            if self._live(channel):
                continue
            busy = session_files.is_busy(ws)
            if channel.subscribers:
                with contextlib.suppress(Exception):
                    self._sync_external(channel)
            if busy != channel.busy_elsewhere:
                channel.busy_elsewhere = busy
                self.status_changed(ws)

    def trim(self) -> None:
        """Close the logs of channels nobody uses (no subscriber, no session), oldest first."""
        idle = [
            ws
            for ws, ch in self.channels.items()
            if not ch.subscribers and not self.active(ws) and not ch.running
        ]
        for ws in idle[: max(0, len(idle) - IDLE_LOGS_KEPT)]:
            channel = self.channels.pop(ws)
            channel.log.close()

    # Status -----------------------------------------------------------------------------

    def status(self, workspace_id: str) -> dict[str, Any]:
        channel = self.channels.get(workspace_id)
        read_seq = self.read_seq(workspace_id)
        if channel is None:
            last_seq = session_files.last_seq(workspace_id)
            open_turn = workspace_id in self._open_turns
            busy = not open_turn and session_files.is_busy(workspace_id)
            state = "streaming" if open_turn else "idle"
            return _status_dict(
                state, None, ((), ()), last_seq, read_seq, busy, None, running=open_turn
            )
        running = channel.running or channel.turn_open
        # Waiting is derived from what is pending (a question, approvals), never stored: one
        # of them settling must not hide the other.
        if self.pending_question(workspace_id) is not None or self.pending_approvals(workspace_id):
            state = "waiting"
        elif running:
            state = "streaming"
        elif channel.error is not None:
            state = "error"
        else:
            state = "idle"
        return _status_dict(
            state,
            channel.phase if running else None,
            self.queued(workspace_id),
            max(channel.log.last_seq, channel.last_published_seq),
            read_seq,
            channel.busy_elsewhere and not running,
            channel.error if state == "error" else None,
            running=running,
        )

    def status_changed(self, workspace_id: str) -> None:
        status = self.status(workspace_id)
        text = dumps({"type": "workspace-status", "workspaceId": workspace_id, "status": status})
        channel = self.channels.get(workspace_id)
        if channel is not None:
            if channel.last_status == text:
                return
            channel.last_status = text
        for client in self.clients:
            client.outbox.put_status(workspace_id, text)

    def send_statuses(self, client: Client, workspace_ids: list[str]) -> None:
        for ws in workspace_ids:
            status = self.status(ws)
            client.outbox.put_status(
                ws, dumps({"type": "workspace-status", "workspaceId": ws, "status": status})
            )

    def workspaces_changed(self) -> None:
        for client in self.clients:
            client.outbox.put_control(WORKSPACES_CHANGED)


_STATUS_EVENTS = (
    E.CompactionStart,
    E.Compaction,
    E.TurnStart,
    E.TurnEnd,
    E.StepStart,
    E.ToolCall,
    E.AssistantMessage,
    E.UserMessage,
)


def _event_text(workspace_id: str, event: Event) -> str:
    return dumps({"type": "event", "workspaceId": workspace_id, "event": event.to_dict()})


def _render(workspace_id: str, frames: list[Any], last_seq: int) -> Iterator[str]:
    for frame in frames:
        if frame.seq is not None and frame.seq > last_seq:
            return
        event = frame_event(frame)
        if event is not None:
            yield _event_text(workspace_id, event)


# What a status says of each queued message: its first characters (the whole text comes back
# from the queue routes), and no more than this many messages (the counts stay exact).
QUEUED_PREVIEW_CHARS = 500
QUEUED_LISTED = 20


def _queued_json(texts: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str, Any]:
    step, turn = texts
    waiting = [("step", t) for t in step] + [("turn", t) for t in turn]
    return {
        "step": len(step),
        "turn": len(turn),
        "messages": [
            {
                "when": when,
                "text": text[:QUEUED_PREVIEW_CHARS],
                "truncated": len(text) > QUEUED_PREVIEW_CHARS,
            }
            for when, text in waiting[:QUEUED_LISTED]
        ],
    }


def _status_dict(
    state: str,
    phase: str | None,
    queued: tuple[tuple[str, ...], tuple[str, ...]],
    last_seq: int,
    read_seq: int,
    busy_elsewhere: bool,
    error: dict[str, Any] | None,
    *,
    running: bool,
) -> dict[str, Any]:
    return {
        "state": state,
        "phase": phase,
        "queued": _queued_json(queued),
        "lastSeq": last_seq,
        "readSeq": read_seq,
        "unread": (not running) and last_seq > read_seq,
        "busyElsewhere": busy_elsewhere,
        "error": error,
    }
