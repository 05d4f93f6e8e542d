"""A workspace's session files, seen from outside an open log: the facade every other layer uses.

Only `xum.store` knows the layout of `$XUM_ROOT/sessions/<workspace-id>/` (the frames file, its
manifest, the writer lock, the partial message; see `sessionlog.py`). Everyone else asks here:

* `is_busy` / `lock_holder`: is a writer (a turn, in any process) using the session right now;
* `last_seq`: the last published sequence number, from the manifest, without reading frames;
* `has_log`: whether anything was ever written;
* `hold` / `writer_lock`: take the writer lock for an operation that must not overlap a turn
  (rename, delete);
* `remove`: delete the session's files (the workspace is being deleted); `location`: where
  they are, to show a user;
* `inspect`: the read-only health report `xum doctor` prints.

To read or write frames, open the log itself: `SessionLog.open(workspace_id)`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from xum.core.errors import StoreError
from xum.core.lock import FileLock, is_locked, read_holder
from xum.core.paths import ensure_private_dir, session_dir
from xum.store.manifest import read_manifest
from xum.store.scan import load_log
from xum.store.sessionlog import LOCK_NAME, LOG_NAME, MANIFEST_NAME, check_workspace_id
from xum.store.turns import open_turn


def _dir(workspace_id: str) -> Path:
    return session_dir(check_workspace_id(workspace_id))


def location(workspace_id: str) -> Path:
    """Where the session's files are (to show a user, as in a deletion preview)."""
    return _dir(workspace_id)


def is_busy(workspace_id: str) -> bool:
    """A writer holds the session's lock: a turn runs (or a lifecycle operation holds it), in
    this process or another one sharing `$XUM_ROOT`."""
    return is_locked(_dir(workspace_id) / LOCK_NAME)


def lock_holder(workspace_id: str) -> dict[str, object] | None:
    """Who holds the writer lock (pid, host, purpose), or None when nobody does."""
    path = _dir(workspace_id) / LOCK_NAME
    return read_holder(path) if is_locked(path) else None


def last_seq(workspace_id: str) -> int:
    """The last published sequence number (0 for a session with nothing published, or one whose
    manifest cannot be read). Reads only the manifest."""
    try:
        read = read_manifest(_dir(workspace_id) / MANIFEST_NAME)
    except Exception:
        return 0
    return read.manifest.last_seq if read.manifest is not None else 0


def has_log(workspace_id: str) -> bool:
    """Whether the session ever had a frame written."""
    return (_dir(workspace_id) / LOG_NAME).exists()


def writer_lock(workspace_id: str, purpose: str) -> FileLock:
    """The session's writer lock, not yet taken, for an operation that must not overlap a turn
    (`acquire(timeout=0)` refuses at once with `LockTimeout`, which names the holder)."""
    return FileLock(ensure_private_dir(_dir(workspace_id)) / LOCK_NAME, purpose=purpose)


@contextlib.contextmanager
def hold(workspace_id: str, purpose: str) -> Iterator[None]:
    """Hold the writer lock for the block; `LockTimeout` at once when someone else has it."""
    lock = writer_lock(workspace_id, purpose)
    lock.acquire(timeout=0)
    try:
        yield
    finally:
        lock.release()


def remove(workspace_id: str) -> None:
    """Delete the session's files. The caller makes sure no writer is using it."""
    import shutil  # deleting only: its import pulls in the compression modules

    shutil.rmtree(_dir(workspace_id), ignore_errors=True)


# ok: vouches for the frames; stale: the frames changed since (a scan read them); missing: frames
# but no manifest; invalid: a manifest that is not one; none: nothing written yet; unreadable:
# the frames file itself cannot be read (see `problem`).
ManifestStatus = Literal["ok", "missing", "invalid", "stale", "none", "unreadable"]


@dataclass(slots=True)
class LogReport:
    """A session log's health, for `xum doctor`."""

    directory: Path
    exists: bool
    frames: int  # lines in the published region, damaged ones included
    damaged: int
    damaged_seqs: list[int | None]  # None where the seq a damaged line held cannot be told
    missing: list[tuple[int, int]]  # inclusive seq ranges with no frame on disk
    last_seq: int
    unpublished_tail_bytes: int
    manifest: ManifestStatus
    open_turn: str | None  # a turn with no turn_end (closed by the next writer)
    writer: dict[str, object] | None = field(default=None)  # who holds writer.lock right now
    # Why the session cannot be read, or what is wrong with its manifest; None when nothing is.
    problem: str | None = None

    @property
    def healthy(self) -> bool:
        return (
            self.manifest in ("ok", "none")
            and not self.damaged
            and not self.missing
            and self.problem is None
        )


def inspect(workspace_id: str) -> LogReport:
    """Health of a session log, for `xum doctor`. Reads only: no lock, no write, no repair."""
    return inspect_dir(session_dir(check_workspace_id(workspace_id)))


def inspect_dir(directory: Path) -> LogReport:
    """The report for one session directory. A log that cannot be read at all (its frames file
    is a directory, say) is a report with `manifest: "unreadable"` and the `problem`, so one
    broken session never stops a listing of the others."""
    lock_path = directory / LOCK_NAME
    try:
        loaded = load_log(directory / LOG_NAME, directory / MANIFEST_NAME)
    except (StoreError, OSError) as exc:
        return LogReport(
            directory=directory,
            exists=True,
            frames=0,
            damaged=0,
            damaged_seqs=[],
            missing=[],
            last_seq=0,
            unpublished_tail_bytes=0,
            manifest="unreadable",
            open_turn=None,
            writer=_holder(lock_path),
            problem=exc.message if isinstance(exc, StoreError) else f"cannot read: {exc}",
        )
    mread = loaded.manifest_read
    exists = loaded.log_sig is not None or mread.sig is not None
    status: ManifestStatus
    if mread.sig is None:
        # An empty log without a manifest is a writer that died before its first publish.
        status = "missing" if loaded.log_sig is not None and loaded.file_size else "none"
    elif mread.manifest is None:
        status = "invalid"
    else:
        status = "ok" if loaded.fast else "stale"
    dangling = open_turn(loaded.frames)
    return LogReport(
        directory=directory,
        exists=exists,
        frames=len(loaded.frames),
        damaged=len(loaded.damaged),
        damaged_seqs=[seq for _, seq in loaded.damaged],
        missing=list(loaded.missing),
        last_seq=loaded.last_seq,
        unpublished_tail_bytes=max(0, loaded.file_size - loaded.size),
        manifest=status,
        open_turn=dangling.turn_id if dangling else None,
        writer=_holder(lock_path),
        problem=mread.problem,
    )


def _holder(lock_path: Path) -> dict[str, object] | None:
    try:
        return read_holder(lock_path) if is_locked(lock_path) else None
    except OSError:
        return None


def reports() -> list[tuple[str, LogReport]]:
    """(directory name, health report) for every session directory under `$XUM_ROOT`, sorted by
    name; for `xum doctor`."""
    from xum.core.paths import sessions_dir

    root = sessions_dir()
    if not root.is_dir():
        return []
    return [(p.name, inspect_dir(p)) for p in sorted(root.iterdir()) if p.is_dir()]
