"""The session log an agent session writes, with the partial message written off the loop.

Every front-end's sessions use it (the one assembly in `xum.workspaces.assembly` opens it): in
the server many sessions share one event loop, and in `xum run` sub-agents share it with their
parent.


While a reply streams, the engine rewrites `partial.json` (what has streamed so far) every
200 ms: a temp file renamed over the old one. That rename waits on the filesystem (ext4 starts
writing the new file back when it replaces an existing one): 0.25 ms on an idle disk here, and
several ms while other writes are being synced. Every session runs on the server's event loop,
so with 50 replies streaming those writes took a large share of the loop's time (a profile of
bench/bench_server.py put them first), in stalls every other delta waited behind.

Here one thread writes them for every session instead. It wakes when the first write is asked
for, waits `GATHER_S` for more, then writes what gathered: a few wake-ups a second however many
replies stream (each hand-over between threads costs CPU and GIL hand-offs on the loop's
thread). The file's contract is unchanged: replaced atomically, best effort, `after_seq` as of
the engine's request, and at most `GATHER_S` later than before. Per log, a newer snapshot
replaces one still waiting (only the latest matters), and `delete_partial` (the step was
committed or dropped) deletes the file and cancels a waiting write; when a write is already
running, the file is deleted again right after it, so a snapshot asked for before a delete never
outlives it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xum.core.paths import ensure_private_dir
from xum.store.sessionlog import SessionLog

log = logging.getLogger("xum.store")

GATHER_S = 0.05


class _Writer:
    """The thread that carries out every `WriterLog`'s partial-message writes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[WriterLog, None] = {}  # in request order
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def request(self, target: WriterLog) -> None:
        with self._lock:
            first = not self._waiting
            self._waiting[target] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="xum-partial", daemon=True)
                self._thread.start()
        if first:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(GATHER_S)
            with self._lock:
                batch = list(self._waiting)
                self._waiting.clear()
                self._wake.clear()
            for target in batch:
                target._carry_out()


_WRITER = _Writer()


class WriterLog(SessionLog):
    def __init__(self, directory: Path, **options: Any) -> None:
        super().__init__(directory, **options)
        self._partial_lock = threading.Lock()
        self._partial_next: tuple[int, Mapping[str, Any]] | None = None
        self._partial_undo = False  # deleted while a write ran: delete once it is done
        self._partial_busy = False  # requested from the writer thread, or running there

    @property
    def partial_busy(self) -> bool:
        """A partial-message write or delete is waiting for the writer thread or running."""
        with self._partial_lock:
            return self._partial_busy

    def write_partial(self, data: Mapping[str, Any]) -> None:
        with self._partial_lock:
            self._partial_next = (self.last_seq, data)
            if self._partial_busy:
                return
            self._partial_busy = True
        _WRITER.request(self)

    def delete_partial(self) -> None:
        with self._partial_lock:
            self._partial_next = None
            # A write may be running on the writer thread: delete again once it is done.
            self._partial_undo = self._partial_busy
        super().delete_partial()

    def _carry_out(self) -> None:
        """On the writer thread: do what was asked, in order, until nothing waits. A delete
        asked for while a write ran comes first; a snapshot still waiting was asked for after
        it (a delete drops the one waiting)."""
        from xum.store import partial as partial_file  # while a reply streams: off start-up

        while True:
            with self._partial_lock:
                item, self._partial_next = self._partial_next, None
                undo, self._partial_undo = self._partial_undo, False
                if item is None and not undo:
                    self._partial_busy = False
                    return
            try:
                if undo:
                    partial_file.delete_partial(self.directory)
                if item is not None:
                    try:
                        partial_file.write_partial(self.directory, *item)
                    except FileNotFoundError:  # the session directory is made by begin_write
                        ensure_private_dir(self.directory)
                        partial_file.write_partial(self.directory, *item)
            except Exception:  # best effort, as the file always was: the next one may work
                log.debug("partial message write failed in %s", self.directory, exc_info=True)
