"""Making an append durable and publishing it: the two flushes side by side, then the rename.

An append has to get two things on disk before its new manifest may replace the old one: the
frame bytes (`fdatasync` of `chat.jsonl`) and the new manifest's own bytes (its temp file,
`fsync`). Neither needs the other, so they may run at the same time, the manifest's temp file on
a helper thread while the caller flushes the log (on ext4 the two usually end in one journal
commit). Only when both are done is the temp file renamed over `chat.manifest.json` and the
directory flushed, exactly as before: the published boundary still never covers a byte that is
not on disk, and the manifest that names it is whole. What changes is the wait before the rename:
one flush instead of two in a row. Measured per append (median, one session): 4.3 -> 1.6-2.4 ms
on a disk other processes were syncing to, 0.50 -> 0.45 ms on an idle one.

That only pays while the append is the only one of the process in flight. When other sessions
of the process publish at the same moment (a busy server), their flushes keep the journal
committing and ours join those commits anyway, and a helper only adds a thread hand-over: with 8
sessions appending at once, side by side was 40% slower on the idle disk. So an append takes the
helper only when it is alone, and otherwise flushes one after the other, as before; likewise when
no helper thread can be started (the interpreter is shutting down).
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from xum.core.fsutil import fsync_dir, temp_path
from xum.core.paths import FILE_MODE
from xum.store.manifest import Manifest, Signature, stat_signature

# Only an append that is alone uses a helper, and it waits for it before it counts itself out,
# so one helper is never busy when the next lone append comes.
_HELPERS = 1

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_in_flight = 0  # publishes running in this process now (under `_pool_lock`)


def _helpers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_HELPERS, thread_name_prefix="xum-manifest")
        return _pool


def _forget_pool() -> None:
    """In a forked child the parent's helper threads (and its appends) do not exist: start new
    ones if needed."""
    global _pool, _pool_lock, _in_flight
    _pool, _pool_lock, _in_flight = None, threading.Lock(), 0


def _enter() -> bool:
    """Count a publish in; True when it is the only one in flight."""
    global _in_flight
    with _pool_lock:
        _in_flight += 1
        return _in_flight == 1


def _leave() -> None:
    global _in_flight
    with _pool_lock:
        _in_flight -= 1


os.register_at_fork(after_in_child=_forget_pool)


def write_temp(path: Path, data: bytes) -> Path:
    """Write `data` to the temp file beside `path` and flush it; returns the temp file. A write
    that fails removes it again."""
    tmp = temp_path(path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def replace(tmp: Path, path: Path) -> None:
    """Rename the flushed temp file over `path` and flush the directory (the rename itself)."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        # Leave no temp file behind, and name the file that could not be replaced (a directory
        # in its place, say), not the temp file.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    fsync_dir(path.parent)


def sync_and_publish(log_fd: int, manifest_path: Path, manifest: Manifest) -> Signature:
    """Flush the frames written to `log_fd` and `manifest`'s temp file at the same time, then
    publish `manifest`. Returns the signature of the manifest now in place. When either flush
    fails nothing is published and the temp file is gone."""
    data = manifest.to_bytes()
    alone = _enter()
    try:
        pending = _side_by_side(manifest_path, data) if alone else None
        try:
            os.fdatasync(log_fd)
            tmp = pending.result() if pending is not None else write_temp(manifest_path, data)
        except BaseException:  # a failed flush, or interrupted while waiting for the helper
            if pending is not None:
                _discard(pending)
            raise
    finally:
        _leave()
    replace(tmp, manifest_path)
    return stat_signature(manifest_path)


def _side_by_side(manifest_path: Path, data: bytes) -> Future[Path] | None:
    """Start the manifest's temp file on a helper; None when no helper can be had."""
    try:
        return _helpers().submit(write_temp, manifest_path, data)
    except RuntimeError:  # no new threads (interpreter shutdown): one flush after the other
        return None


def _discard(pending: Future[Path]) -> None:
    """Nothing is published: wait for the helper's temp file and remove it (a failed write
    removed its own)."""
    with contextlib.suppress(BaseException):
        tmp = pending.result()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
