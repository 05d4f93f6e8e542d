"""Cross-process exclusive locks on a lock file (flock), with a named holder.

The holder writes its pid, host and purpose into the lock file after taking the lock, so a
process that is refused can say who holds it. flock is released by the kernel when the holder
dies, so a kill -9 never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import orjson

from xum.core.paths import FILE_MODE

# How long a lock refused without its holder's name is tried again (see `FileLock.acquire`).
UNNAMED_GRACE_S = 0.5


class LockTimeout(Exception):
    def __init__(self, path: Path, holder: dict[str, object] | None) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is locked by {describe_holder(holder)}")


def describe_holder(holder: dict[str, object] | None) -> str:
    if not holder:
        return "another process"
    parts = [f"pid {holder.get('pid')}"]
    if holder.get("host") and holder.get("host") != socket.gethostname():
        parts.append(f"on {holder['host']}")
    if holder.get("purpose"):
        parts.append(f"({holder['purpose']})")
    return " ".join(parts)


def read_holder(path: Path) -> dict[str, object] | None:
    try:
        raw = path.read_bytes()
        value = orjson.loads(raw) if raw.strip() else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


class FileLock:
    """An exclusive flock on `path`. Re-entrant within one object; not shared between threads."""

    def __init__(self, path: Path, purpose: str = "") -> None:
        self.path = path
        self.purpose = purpose
        self._fd: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float = 2.0, poll: float = 0.02) -> None:
        if self._fd is not None:
            self._depth += 1
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if now >= deadline:
                    holder = read_holder(self.path)
                    # A holder names itself just after taking the lock, and `is_locked` holds
                    # it for an instant without a name: refused with no name yet, keep trying
                    # a moment longer (to take it, or to say who has it) before giving up.
                    if holder is not None or now >= deadline + UNNAMED_GRACE_S:
                        os.close(fd)
                        raise LockTimeout(self.path, holder) from None
                time.sleep(poll)
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "purpose": self.purpose,
            "argv": " ".join(sys.argv[:3])[:200],
            "since_ms": time.time_ns() // 1_000_000,
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, orjson.dumps(holder), 0)
        self._fd = fd
        self._depth = 1

    def release(self) -> None:
        if self._fd is None:
            return
        self._depth -= 1
        if self._depth > 0:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def is_locked(path: Path) -> bool:
    """True when some process holds the lock on `path` right now (probe without waiting)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def locked(path: Path, purpose: str = "", timeout: float = 10.0) -> Iterator[FileLock]:
    lock = FileLock(path, purpose)
    lock.acquire(timeout=timeout)
    try:
        yield lock
    finally:
        lock.release()
