"""A `HostListener` that keeps what it is told, with waits on what a test expects."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from xum.engine import events as E
from xum.host.pending import PendingQuestion


class HostRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, E.Event]] = []
        self.failures: list[Exception] = []
        self._changed = asyncio.Event()

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.events.append((workspace_id, event))
        self._changed.set()

    def status_changed(self, workspace_id: str) -> None:
        return None

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        self.failures.append(error)
        self._changed.set()

    def question_opened(self, pending: PendingQuestion) -> None:
        return None

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        return None

    def of(self, kind: type[E.Event], workspace_id: str | None = None) -> list[E.Event]:
        return [
            e
            for ws, e in self.events
            if isinstance(e, kind) and (workspace_id is None or ws == workspace_id)
        ]

    async def until(self, check: Callable[[], bool], timeout: float = 30.0) -> None:
        """Wait (bounded) until `check()` holds, looking again after each event."""
        async with asyncio.timeout(timeout):
            while not check():
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.05)
