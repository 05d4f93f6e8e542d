"""The hub's fan-out with a real session log: a slow client is cut loose without slowing anyone,
and resumes from its last seq with nothing missing or repeated; frames committed without an
event still reach subscribers in order."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from xum.engine import events as E
from xum.engine.derive import frame_event
from xum.llm.types import text_message
from xum.server.hub import Client, Hub
from xum.store import frame_types as ev

WS = "fanout-ws"


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


def commit(hub: Hub, text: str, *, publish: bool = True) -> int:
    log = hub.channels[WS].log
    frame = log.append(ev.USER_MESSAGE, {"message": text_message("user", text)})
    assert frame.seq is not None
    if publish:
        event = frame_event(frame)
        assert event is not None
        hub.publish(WS, event)
    return frame.seq


def seqs(messages: list[dict[str, Any]]) -> list[int]:
    return [m["event"]["seq"] for m in messages if m["type"] == "event" and "seq" in m["event"]]


async def test_slow_client_is_bounded_and_resumes_without_gaps() -> None:
    hub = Hub(capacity=8)
    await hub.channel(WS)
    for i in range(3):
        commit(hub, f"history {i}")
    fast, slow = hub.connect(), hub.connect()
    await hub.subscribe(fast, WS, 0)
    await hub.subscribe(slow, WS, 0)
    fast_got = await drain(fast)
    assert seqs(fast_got) == [1, 2, 3]

    slow_got: list[dict[str, Any]] = []
    for i in range(60):
        commit(hub, f"live {i}")
        hub.publish(WS, E.TextDelta(text="x"))
        fast_got += await drain(fast)  # the fast client keeps up
        if i == 1:
            slow_got += await drain(slow)  # the slow one reads once, then stalls
        assert len(slow.outbox) <= 8 + 1  # and never costs more than the bound

    assert seqs(fast_got) == list(range(1, 64))
    assert slow not in hub.channels[WS].subscribers
    slow_got += await drain(slow)
    assert slow_got[-1] == {"type": "resync", "workspaceId": WS, "reason": "slow-client"}
    have = seqs(slow_got)
    assert have == list(range(1, len(have) + 1))  # a gap-free prefix
    assert len(have) >= 5

    # It resubscribes from the last seq it has and gets exactly the rest.
    last = have[-1] if have else 0
    await hub.subscribe(slow, WS, last)
    commit(hub, "after resume")
    rest = await drain(slow)
    assert seqs(rest) == list(range(last + 1, 65))
    assert [m["type"] for m in rest].count("subscribed") == 1


async def test_frames_committed_without_an_event_are_filled_in() -> None:
    hub = Hub(capacity=100)
    await hub.channel(WS)
    client = hub.connect()
    await hub.subscribe(client, WS, 0)
    await drain(client)
    commit(hub, "silent", publish=False)  # e.g. crash repair done by begin_write
    commit(hub, "announced")
    got = await drain(client)
    assert seqs(got) == [1, 2]
    assert [m["event"]["text"] for m in got if m["type"] == "event"] == ["silent", "announced"]
    # An event the hub already sent from the log is not sent twice.
    hub.publish(WS, E.UserMessage(seq=1, ts=0, text="silent"))
    assert await drain(client) == []


async def test_partial_snapshot_on_subscribe_mid_reply() -> None:
    hub = Hub(capacity=100)
    await hub.channel(WS)
    hub.publish(WS, E.TurnStart(seq=commit(hub, "start", publish=False), ts=0, turn_id="t1"))
    hub.publish(WS, E.StepStart(step=1, turn_id="t1"))
    for piece in ("Hel", "lo"):
        hub.publish(WS, E.TextDelta(text=piece))
    hub.publish(WS, E.ToolCallStart(index=0, call_id="c1", name="bash"))
    hub.publish(WS, E.ToolCallDelta(index=0, call_id="c1", arguments='{"a"'))
    late = hub.connect()
    await hub.subscribe(late, WS, 1)
    got = await drain(late)
    assert got[0]["type"] == "partial"
    assert got[0]["message"] == {
        "text": "Hello",
        "reasoning": "",
        "tool_calls": [{"id": "c1", "name": "bash", "arguments": '{"a"'}],
    }
    assert got[0]["afterSeq"] == 1 and got[0]["turnId"] == "t1" and got[0]["step"] == 1
    assert got[1]["type"] == "subscribed"
    hub.publish(WS, E.DiscardPartial())
    again = hub.connect()
    await hub.subscribe(again, WS, 1)
    assert (await drain(again))[0]["message"]["text"] == ""
