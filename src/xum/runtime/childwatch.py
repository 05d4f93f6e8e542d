"""Waiting for child processes without starting a thread per child (Python 3.11).

On Python 3.11 asyncio learns that a subprocess exited through `ThreadedChildWatcher`, which
starts a new thread for every child, from the event loop's own thread. With many agents
running commands at once, those thread starts were the largest single cost of a tool call on
the loop (`python -m bench concurrency`). Linux (5.3 and later) hands out a process file
descriptor that becomes readable when the process exits; the loop can watch it like a socket.
Python 3.12 does that by itself, so `install()` only acts on 3.11, and only where pidfds work.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

_installed = False


def install() -> None:
    """Make asyncio wait for children through pidfds from now on (once per process; cheap to
    call before every spawn)."""
    global _installed
    if _installed:
        return
    _installed = True
    if sys.version_info >= (3, 12) or not _pidfds_work():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.set_child_watcher(PidfdWatcher())


def _pidfds_work() -> bool:
    try:
        fd = os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return False
    os.close(fd)
    return True


class PidfdWatcher(asyncio.AbstractChildWatcher):
    """Watches each child's pidfd on whichever event loop spawned it (tests and `xum run` each
    run their own loops, so no loop is attached up front)."""

    def add_child_handler(  # type: ignore[override]  # typeshed's generic form says the same
        self, pid: int, callback: Callable[..., Any], *args: Any
    ) -> None:
        loop = asyncio.get_running_loop()
        pidfd = os.pidfd_open(pid)
        loop.add_reader(pidfd, self._reap, loop, pid, pidfd, callback, args)

    @staticmethod
    def _reap(
        loop: asyncio.AbstractEventLoop,
        pid: int,
        pidfd: int,
        callback: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            code = 255  # someone else reaped it; asyncio's own watchers report the same
        else:
            code = os.waitstatus_to_exitcode(status)
        callback(pid, code, *args)

    def remove_child_handler(self, pid: int) -> bool:
        return False  # the pidfd reader removes itself when the child exits

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        pass

    def close(self) -> None:
        pass

    def is_active(self) -> bool:
        return True

    def __enter__(self) -> PidfdWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
