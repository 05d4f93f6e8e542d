"""Durable file writes: temp file + fsync + rename, so a crash leaves the old or the new file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from xum.core.paths import FILE_MODE


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int | None = FILE_MODE, durable: bool = True
) -> None:
    """Replace `path` with `data` atomically.

    `mode=None` keeps the permissions of the file being replaced (or the umask default for a new
    file); otherwise the new file gets `mode`. With `durable`, the data and the rename are fsynced.
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_current_umask()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int | None = FILE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def _current_umask() -> int:
    # Read, not set and restored: for the moment between two os.umask calls the process-wide
    # mask would be 0, and a process started then (a command, the command helper, which
    # passes its mask to every command it starts) would keep it.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0)  # no /proc (not Linux): the only way to learn it
    os.umask(mask)
    return mask
