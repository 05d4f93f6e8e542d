"""A turn takes its session log's writer lock on a worker thread: waiting for another writer
(such as `xum run`) never stalls the loop every workspace of a server shares."""

from __future__ import annotations

import asyncio
import threading

from xum.core.ids import workspace_id
from xum.core.lock import is_locked
from xum.store.sessionlog import LOCK_NAME, SessionLog


def hold_elsewhere(ws: str, seconds: float) -> threading.Thread:
    """Another writer holding the lock for `seconds` (its own open file, as another process)."""
    taken = threading.Event()

    def run() -> None:
        other = SessionLog.open(ws, purpose="xum run")
        with other.writing():
            taken.set()
            threading.Event().wait(seconds)
        other.close()

    thread = threading.Thread(target=run)
    thread.start()
    taken.wait()
    return thread


async def test_the_loop_runs_on_while_the_turn_waits_for_another_writer() -> None:
    ws = workspace_id()
    log = SessionLog.open(ws, purpose="xum server")
    other = hold_elsewhere(ws, 0.4)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await log.begin_write_off_loop()
    ticker.cancel()
    assert ticks >= 10  # the loop kept going while the lock was awaited
    assert log.writing_now
    log.end_write()
    assert not is_locked(log.directory / LOCK_NAME)
    other.join()
    log.close()


async def test_a_cancelled_wait_does_not_keep_the_lock() -> None:
    ws = workspace_id()
    log = SessionLog.open(ws, purpose="xum server")
    other = hold_elsewhere(ws, 0.3)
    waiting = asyncio.create_task(log.begin_write_off_loop())
    await asyncio.sleep(0.05)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    other.join()
    for _ in range(100):  # the worker thread gets the lock, then the loop lets it go
        await asyncio.sleep(0.01)
        if not log.writing_now:
            break
    assert not log.writing_now
    assert not is_locked(log.directory / LOCK_NAME)
    log.close()
