"""An asyncio event loop on a thread of its own.

Each workspace's agent session runs on one, so the blocking parts of a turn (fsync of every
committed frame, git and hook subprocesses, partial-message writes) stall only that workspace,
never the server's loop that fans events out to browsers or the other workspaces' turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self.loop.run_until_complete(
                        asyncio.wait(pending, timeout=5.0)  # let them close durably
                    )
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Run `coro` on this thread's loop; the result as a future of the caller's loop."""
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Call a plain function on this thread's loop and wait for its result."""

        async def run() -> T:
            return fn(*args)

        return await self.submit(run())

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    async def stop(self, timeout: float = 15.0) -> None:
        if self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        await asyncio.to_thread(self.thread.join, timeout)
