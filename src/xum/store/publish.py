"""Making an append durable and publishing it: the two flushes side by side, then the rename.

An append has to get two things on disk before its new manifest may replace the old one: the
frame bytes (`fdatasync` of `chat.jsonl`) and the new manifest's own bytes (its temp file,
`fsync`). Neither needs the other, so they run at the same time, the manifest's temp file on a
helper thread while the caller flushes the log; on ext4 the two flushes usually end in the same
journal commit. Only when both are done is the temp file renamed over `chat.manifest.json` and
the directory flushed, exactly as before, so the published boundary still never covers a byte
that is not on disk, and the manifest that names it is whole. What changes is the wait: one
flush instead of two in a row before the rename (measured in bench/bench_sessionlog.py).

The helper threads are shared by every session of the process (the server appends to many
sessions at once; each append needs one helper for a moment). When no helper can be had (the
interpreter is shutting down) the two flushes simply run one after the other.
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

# As many as the recorder's append threads (xum.engine.recorder): each append in flight needs
# at most one helper, so none waits for another session's manifest.
_HELPERS = 8

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _helpers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_HELPERS, thread_name_prefix="xum-manifest")
        return _pool


def _forget_pool() -> None:
    """In a forked child the parent's helper threads do not exist: start new ones if needed."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


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
    try:
        pending: Future[Path] | None = _helpers().submit(write_temp, manifest_path, data)
    except RuntimeError:  # no new threads (interpreter shutdown): one flush after the other
        pending = None
    try:
        os.fdatasync(log_fd)
    except BaseException:
        if pending is not None:
            _discard(pending)
        raise
    tmp = pending.result() if pending is not None else write_temp(manifest_path, data)
    replace(tmp, manifest_path)
    return stat_signature(manifest_path)


def _discard(pending: Future[Path]) -> None:
    """The log could not be flushed: wait for the temp file and remove it unpublished."""
    with contextlib.suppress(BaseException):
        tmp = pending.result()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
