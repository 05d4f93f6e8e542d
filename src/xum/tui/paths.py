"""File paths of a workspace for `@` completion in the composer.

Listed once per workspace (and again when older than `FRESH_S`) on a worker thread: `git
ls-files` in a git checkout (tracked and untracked files, ignored ones left out), else a walk
that skips hidden directories. At most `MAX_FILES` paths: completion is for finding a file
quickly, not for listing a monorepo.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

MAX_FILES = 20_000
FRESH_S = 30.0
SHOWN = 12


def list_files(root: Path) -> list[str]:
    """Relative paths under `root`, sorted (blocking: call it on a worker thread)."""
    from xum.runtime.git import git_env

    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=10,
            check=False,
            env=git_env(GIT_OPTIONAL_LOCKS="0"),
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode == 0:
        names = [n.decode("utf-8", "replace") for n in done.stdout.split(b"\0") if n]
        return sorted(set(names[:MAX_FILES]))
    found: list[str] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = os.path.relpath(here, root)
        for name in sorted(files):
            found.append(name if rel == "." else f"{rel}/{name}")
            if len(found) >= MAX_FILES:
                return found
    return found


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
        files = cached[1]
        lowered = prefix.lower()
        starts = [f for f in files if f.lower().startswith(lowered)]
        if len(starts) < SHOWN:
            # Then any path whose file name starts with it, then any that contains it.
            names = [
                f
                for f in files
                if f not in starts and f.rsplit("/", 1)[-1].lower().startswith(lowered)
            ]
            starts.extend(names[: SHOWN - len(starts)])
        if len(starts) < SHOWN and lowered:
            inside = [f for f in files if f not in starts and lowered in f.lower()]
            starts.extend(inside[: SHOWN - len(starts)])
        return starts[:SHOWN]

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
