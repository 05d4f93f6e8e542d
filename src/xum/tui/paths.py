"""File paths of a workspace for `@` completion in the composer.

Listed once per workspace (and again when older than `FRESH_S`) on a worker thread by
`xum.workspaces.filelist` (git's tracked and untracked files, else a walk), which also ranks the
matches; the browser UI's `@` mentions use the same module through the server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from xum.workspaces.filelist import list_files, rank

FRESH_S = 30.0
SHOWN = 12


class PathIndex:
    """Cached file lists per directory; `matches` answers from the cache at once and refreshes
    it in the background (then calls `on_ready`, so the composer can offer again)."""

    def __init__(self, on_ready: Callable[[], None]) -> None:
        self.on_ready = on_ready
        self._files: dict[Path, tuple[float, list[str]]] = {}
        self._loading: set[Path] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def matches(self, root: Path, prefix: str) -> list[str]:
        cached = self._files.get(root)
        if cached is None or time.monotonic() - cached[0] > FRESH_S:
            self._load(root)
        if cached is None:
            return []
        return rank(cached[1], prefix, SHOWN)

    def _load(self, root: Path) -> None:
        if root in self._loading:
            return
        self._loading.add(root)

        async def load() -> None:
            try:
                files = await asyncio.to_thread(list_files, root)
                self._files[root] = (time.monotonic(), files)
            finally:
                self._loading.discard(root)
            self.on_ready()

        task = asyncio.ensure_future(load())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
