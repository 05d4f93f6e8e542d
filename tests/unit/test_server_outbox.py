"""A WebSocket client's bounded outbox: what a slow client costs, and how it resumes."""

from __future__ import annotations

import asyncio
import json

from xum.server.outbox import WORKSPACES_CHANGED, Backlog, Outbox


async def drain(box: Outbox) -> list[str]:
    out = []
    while True:
        try:
            text = await asyncio.wait_for(box.get(), 0.01)
        except TimeoutError:
            return out
        if text is None:
            return out
        out.append(text)


async def test_overflow_drops_only_that_workspace_and_queues_one_resync() -> None:
    overflowed: list[str] = []
    box = Outbox(capacity=4, on_overflow=overflowed.append)
    assert box.put("a", "a1") and box.put("b", "b1") and box.put("a", "a2") and box.put("b", "b2")
    assert not box.put("a", "a3")  # full: a's items go, a resync takes their place
    assert overflowed == ["a"]
    assert len(box) == 3
    texts = await drain(box)
    assert texts[:2] == ["b1", "b2"]
    assert json.loads(texts[2]) == {"type": "resync", "workspaceId": "a", "reason": "slow-client"}


async def test_memory_stays_bounded_however_far_behind() -> None:
    box = Outbox(capacity=100, on_overflow=lambda _ws: None)
    for i in range(10_000):
        box.put(f"w{i % 7}", "x" * 10)
    assert len(box) <= 100 + 7  # the bound, plus at most one resync per workspace


async def test_statuses_coalesce_and_controls_come_first() -> None:
    box = Outbox(capacity=10)
    box.put("a", "event")
    box.put_status("a", "status-1")
    box.put_status("a", "status-2")
    box.put_control(WORKSPACES_CHANGED)
    box.put_control(WORKSPACES_CHANGED)
    assert await drain(box) == [WORKSPACES_CHANGED, "status-2", "event"]


async def test_a_backlog_is_one_item_rendered_lazily() -> None:
    rendered: list[int] = []

    def texts():  # type: ignore[no-untyped-def]
        for i in range(1000):
            rendered.append(i)
            yield str(i)

    box = Outbox(capacity=2)
    box.put("a", Backlog("a", texts()))
    box.put("a", "live")
    assert rendered == []
    out = await drain(box)
    assert out == [*map(str, range(1000)), "live"]


async def test_get_waits_for_an_item_and_close_wakes_it() -> None:
    box = Outbox()
    waiter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)  # one step of the waiter: it is now blocked on the empty box
    assert not waiter.done()
    box.put("a", "hello")
    assert await waiter == "hello"
    waiter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    assert not waiter.done()
    box.close()
    assert await waiter is None
