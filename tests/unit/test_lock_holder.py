"""A lock refused in the instant between its holder taking it and writing its name still says
who holds it, and one held for an instant by a nameless probe is taken, not refused.

The instant is made exact with inotify: the holder's name is written only once the refused
process has read the lock file and found it empty (its read-only open closed), which is when
the code before this fix gave up with "held by an unknown process"."""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import struct
import threading
from pathlib import Path

import orjson
import pytest

from xum.core.lock import FileLock, LockTimeout

IN_CLOSE_NOWRITE = 0x10
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


class CloseWatch:
    """The read-only closes of one file, as inotify reports them."""

    def __init__(self, path: Path) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = libc.inotify_init()
        if self.fd < 0 or libc.inotify_add_watch(self.fd, bytes(path), IN_CLOSE_NOWRITE) < 0:
            pytest.skip("inotify is not available here")

    def wait_for_close(self) -> None:
        """Block until the next read-only close of the file."""
        while True:
            data = os.read(self.fd, 4096)
            offset = 0
            while offset < len(data):
                _wd, mask, _cookie, length = EVENT_HEADER.unpack_from(data, offset)
                offset += EVENT_HEADER.size + length
                if mask & IN_CLOSE_NOWRITE:
                    return

    def close(self) -> None:
        os.close(self.fd)


def hold_without_name(path: Path) -> int:
    """Take the flock the way a holder does in its first instant: before writing its name."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def contend(lock: FileLock) -> tuple[threading.Thread, list[LockTimeout | None]]:
    """Try `lock` without waiting, in a thread; the list gets None (taken) or the refusal."""
    outcome: list[LockTimeout | None] = []

    def attempt() -> None:
        try:
            lock.acquire(timeout=0)
            outcome.append(None)
        except LockTimeout as exc:
            outcome.append(exc)

    thread = threading.Thread(target=attempt)
    thread.start()
    return thread, outcome


def test_a_refusal_in_the_holders_first_instant_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "session.lock"
    held = hold_without_name(path)
    watch = CloseWatch(path)
    thread, outcome = contend(FileLock(path, purpose="second"))
    try:
        watch.wait_for_close()  # it was refused and read an empty file
        os.pwrite(held, orjson.dumps({"pid": 4242, "purpose": "first"}), 0)
        thread.join(timeout=30)
    finally:
        watch.close()
        os.close(held)
    assert not thread.is_alive()
    error = outcome[0]
    assert isinstance(error, LockTimeout)
    assert error.holder is not None and error.holder.get("pid") == 4242
    assert "pid 4242" in str(error)


def test_a_lock_a_nameless_probe_held_for_an_instant_is_taken(tmp_path: Path) -> None:
    path = tmp_path / "session.lock"
    held = hold_without_name(path)
    watch = CloseWatch(path)
    lock = FileLock(path, purpose="second")
    thread, outcome = contend(lock)
    try:
        watch.wait_for_close()  # refused, found no name
        os.close(held)  # the probe lets go
        thread.join(timeout=30)
    finally:
        watch.close()
    assert not thread.is_alive() and outcome == [None]
    assert lock.held
    lock.release()
