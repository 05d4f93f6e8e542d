"""The hub fills a gap in a live session's events from that session's log in memory: the
subscribers get every committed frame once, in order, and the hub's own read-only view of the
log is not read from disk again on each step. Logs written through any other log object (a
sub-agent's, another process's) are still read from disk."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from xum.engine import events as E
from xum.engine.derive import frame_event
from xum.llm.types import text_message
from xum.server.hub import Client, Hub
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog

WS = "live-gap-ws"


async def drain(client: Client) -> list[dict[str, Any]]:
    out = []
    while True:
        try:
            text = await asyncio.wait_for(client.outbox.get(), 0.01)
        except TimeoutError:
            return out
        if text is None:
            return out
        out.append(json.loads(text))


def events(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [
        (m["event"]["seq"], m["event"].get("text", m["event"]["type"]))
        for m in messages
        if m["type"] == "event" and "seq" in m["event"]
    ]


def write(log: SessionLog, text: str, hub: Hub | None = None) -> None:
    """One user message through `log`; its event goes to `hub` when one is given (as the
    recorder publishes what it appended), else it is a frame without an event."""
    frame = log.append(ev.USER_MESSAGE, {"message": text_message("user", text)})
    if hub is not None:
        event = frame_event(frame)
        assert event is not None
        hub.publish(WS, event)


async def test_a_live_sessions_gap_is_filled_from_its_frames_in_memory() -> None:
    hub = Hub(capacity=100)
    view = (await hub.channel(WS)).log  # the hub's read-only view
    session_log = SessionLog.open(WS, purpose="the session")  # what the agent writes through
    hub.live_log = lambda ws: session_log if ws == WS else None
    hub.active = lambda ws: ws == WS
    try:
        client = hub.connect()
        await hub.subscribe(client, WS, 0)
        await drain(client)
        for step in range(3):
            write(session_log, f"silent {step}")  # bookkeeping or crash repair: no event
            session_log.append(ev.STEP_START, {"step": step})  # no event either, never shown
            write(session_log, f"announced {step}", hub)
        got = await drain(client)
        assert events(got) == [
            (1, "silent 0"),
            (3, "announced 0"),
            (4, "silent 1"),
            (6, "announced 1"),
            (7, "silent 2"),
            (9, "announced 2"),
        ]
        # Nothing was read from disk for it: the hub's view is as it was at the subscribe.
        assert view.last_seq == 0
        # An event already sent through the gap is not sent again.
        hub.publish(WS, E.UserMessage(seq=7, ts=0, text="silent 2"))
        assert await drain(client) == []

        # A later subscriber gets the same history from the disk, then live events.
        late = hub.connect()
        await hub.subscribe(late, WS, 0)
        backlog = await drain(late)
        assert events(backlog) == events(got)
        assert backlog[-1]["type"] == "subscribed" and backlog[-1]["lastSeq"] == 9
        write(session_log, "after", hub)
        assert events(await drain(late)) == [(10, "after")]
        assert events(await drain(client)) == [(10, "after")]
    finally:
        session_log.close()


async def test_a_gap_in_a_log_no_live_session_here_writes_is_read_from_disk() -> None:
    hub = Hub(capacity=100)
    await hub.channel(WS)
    other = SessionLog.open(WS, purpose="a sub-agent")  # not a live session of this hub
    try:
        client = hub.connect()
        await hub.subscribe(client, WS, 0)
        await drain(client)
        write(other, "silent")
        write(other, "announced", hub)
        assert events(await drain(client)) == [(1, "silent"), (2, "announced")]
    finally:
        other.close()


async def test_a_subscriber_ahead_of_the_hub_gets_no_partial_it_already_has() -> None:
    """A history page read the step's reply from the log before its append returned: the
    subscribe that follows must not send that reply again as the in-flight partial (the page
    showed it twice until the turn ended)."""
    hub = Hub(capacity=100)
    await hub.channel(WS)
    session_log = SessionLog.open(WS, purpose="the session")
    hub.live_log = lambda ws: session_log if ws == WS else None
    hub.active = lambda ws: ws == WS
    try:
        start = session_log.append(ev.TURN_START, {"turn_id": "t1"})
        event = frame_event(start)
        assert event is not None
        hub.publish(WS, event)
        hub.publish(WS, E.StepStart(step=0, turn_id="t1"))
        hub.publish(WS, E.TextDelta(text="Echo: hello"))
        usage = {"input_tokens": 1, "output_tokens": 1}
        reply = {
            "message": text_message("assistant", "Echo: hello"),
            "usage": usage,
            "finish_reason": "stop",
            "model": "m",
            "cost_usd": None,
            "step": 0,
        }
        # Committed, but its event is not published yet (the append is still returning).
        session_log.append(ev.ASSISTANT_MESSAGE, reply)
        client = hub.connect()
        await hub.subscribe(client, WS, session_log.last_seq)  # what the history page showed
        got = await drain(client)
        assert [m for m in got if m["type"] == "partial"] == []
        assert events(got) == []  # nothing it has already
    finally:
        session_log.close()
