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
            mode = 0o666 & ~current_umask()
    tmp = temp_path(path, os.getpid())
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
    try:
        os.replace(tmp, path)
    except OSError as exc:
        # A failed write leaves no temp file behind, and its error names the file that could
        # not be replaced (a directory in its place, say), not the temp file.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    if durable:
        fsync_dir(path.parent)


def temp_path(path: Path, pid: int) -> Path:
    """The temp file `atomic_write_bytes` writes for `path` in process `pid`."""
    return path.with_name(f".{path.name}.{pid}.tmp")


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temp files of `path` that processes no longer running left behind (a kill
    between writing and renaming); returns those removed. A live process's are its own."""
    prefix, suffix = f".{path.name}.", ".tmp"
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    removed: list[Path] = []
    for name in names:
        pid_text = name[len(prefix) : -len(suffix)]
        if not (name.startswith(prefix) and name.endswith(suffix) and pid_text.isdigit()):
            continue
        pid = int(pid_text)
        if pid == os.getpid() or _running(pid):
            continue
        stale = path.parent / name
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed.append(stale)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return True  # cannot tell: keep its file
    return True


def atomic_write_text(path: Path, text: str, *, mode: int | None = FILE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def current_umask() -> int:
    """The process's file mode mask, read without changing it (where /proc allows)."""
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
