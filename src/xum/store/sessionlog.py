"""The durable session log of one workspace: `$XUM_ROOT/sessions/<workspace-id>/`.

    chat.jsonl           frames, one per line (see `frames.py`)
    chat.manifest.json   the published boundary (see `manifest.py`)
    writer.lock          flock held by whoever is writing, with its pid, host and purpose
    partial.json         the assistant message still streaming (see `partial.py`)

Opening a log only reads: it never locks and never writes, so a server can keep a session open
while a CLI takes a turn on it. Writing happens under `writer.lock`, held for one turn
(`writing()` / `begin_write()` .. `end_write()`) or for one append outside a turn. Taking the lock
brings this object up to date with frames another xum process published meanwhile, then heals
the log (drops an unpublished tail, publishes what a scan quarantined) and closes a turn a crash
left open. Any other change to the files is refused with `SessionChangedError`, never written
over; the caller reopens.

Not thread-safe: one object per thread (the engine drives it from one event loop).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from xum.core.clock import now_ms
from xum.core.errors import SessionBusyError, SessionChangedError, StoreError
from xum.core.fsutil import remove_stale_temps
from xum.core.ids import event_id
from xum.core.lock import FileLock, LockTimeout
from xum.core.paths import FILE_MODE, ensure_private_dir, session_dir
from xum.store import frame_types as ev
from xum.store.frames import MAX_SEQ, Frame, decode_trusted, encode_frame
from xum.store.manifest import (
    MANIFEST_VERSION,
    Manifest,
    Signature,
    read_manifest,
    signature,
    stat_signature,
    write_manifest,
)
from xum.store.publish import sync_and_publish
from xum.store.scan import Loaded, decode_published, load_log, read_all
from xum.store.turns import open_turn

if TYPE_CHECKING:
    from hashlib import _Hash as Hasher

    from xum.store.partial import Partial

LOG_NAME = "chat.jsonl"
MANIFEST_NAME = "chat.manifest.json"
LOCK_NAME = "writer.lock"
DEFAULT_LOCK_TIMEOUT = 2.0

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Event = ev.FrameSpec
SyncResult = Literal["unchanged", "appended", "reloaded"]


def check_workspace_id(workspace_id: str) -> str:
    """Refuse ids that could name a path outside the sessions directory."""
    if not _SAFE_ID.fullmatch(workspace_id) or ".." in workspace_id:
        raise StoreError(
            f"not a valid workspace id: {workspace_id!r}",
            hint="workspace ids are letters, digits, '.', '_' and '-'",
        )
    return workspace_id


class SessionLog:
    """One workspace's event log. See the module docstring for the rules."""

    def __init__(
        self,
        directory: Path,
        *,
        purpose: str = "session",
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> None:
        self.directory = directory
        self.purpose = purpose
        self.lock_timeout = lock_timeout
        # Bumped whenever the frames were reloaded from scratch rather than extended, so a
        # projection built on the old list knows to start over.
        self.generation = 0
        self._log_path = directory / LOG_NAME
        self._manifest_path = directory / MANIFEST_NAME
        self._lock: FileLock | None = None
        self._depth = 0
        self._fd: int | None = None
        self._adopt(load_log(self._log_path, self._manifest_path))

    @classmethod
    def open(
        cls,
        workspace_id: str,
        *,
        purpose: str = "session",
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> Self:
        """Open (read) the log of `workspace_id`; nothing is created until the first write."""
        return cls(
            session_dir(check_workspace_id(workspace_id)),
            purpose=purpose,
            lock_timeout=lock_timeout,
        )

    # Reading ---------------------------------------------------------------------------------

    @property
    def frames(self) -> Sequence[Frame]:
        """Every published frame in log order, damaged ones included. Do not mutate."""
        return self._frames

    @property
    def last_seq(self) -> int:
        """The highest sequence number published; the next frame gets `last_seq + 1`."""
        return self._last_seq

    @property
    def writing_now(self) -> bool:
        return self._depth > 0

    def frames_after(self, seq: int) -> list[Frame]:
        """Frames after the one with sequence number `seq`, in log order. Costs O(result)."""
        frames = self._frames
        if self._regular:  # frames[i].seq == i + 1 for every frame
            return frames[max(seq, 0) :]
        start = len(frames)
        while start > 0:
            prev = frames[start - 1].seq
            if prev is not None and prev <= seq:
                break
            start -= 1
        return frames[start:]

    def damaged_frames(self) -> list[Frame]:
        return [self._frames[line] for line, _ in self._damaged]

    def damaged_lines(self) -> list[tuple[int, Frame]]:
        """The damaged frames with their line numbers in the log (1-based)."""
        return [(line + 1, self._frames[line]) for line, _ in self._damaged]

    def refresh(self) -> SyncResult:
        """Pick up what other writers published: `appended` (new frames are in `frames`),
        `reloaded` (the log changed otherwise and was read again: `generation` moved on) or
        `unchanged`."""
        return self._sync(writer=self._depth > 0)

    # Writing ---------------------------------------------------------------------------------

    async def begin_write_off_loop(self, purpose: str | None = None) -> None:
        """`begin_write` on a worker thread. Taking the lock reads what other processes
        appended, heals the log and may wait (up to `lock_timeout`) for another writer: none of
        that belongs on an event loop that other sessions share. A wait that is cancelled lets
        go of the lock as soon as the thread has it."""
        if self._depth:  # held already (re-entrant): nothing slow to do, no thread hop
            self.begin_write(purpose)
            return
        import asyncio

        future = asyncio.ensure_future(asyncio.to_thread(self.begin_write, purpose))
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:

            def release(done: asyncio.Future[None]) -> None:
                if not done.cancelled() and done.exception() is None:
                    self.end_write()

            future.add_done_callback(release)
            raise

    def begin_write(self, purpose: str | None = None, timeout: float | None = None) -> None:
        """Take the writer lock (re-entrant). Waits up to `timeout` seconds (default
        `lock_timeout`) for another writer, then raises `SessionBusyError` naming it."""
        if self._depth:
            self._depth += 1
            return
        ensure_private_dir(self.directory)
        lock = FileLock(self.directory / LOCK_NAME, purpose or self.purpose)
        wait = self.lock_timeout if timeout is None else timeout
        try:
            lock.acquire(timeout=wait)
        except LockTimeout as exc:
            raise _busy(self.directory.name, exc.holder, wait) from None
        self._lock = lock
        try:
            # A writer killed between writing a manifest's temp file and renaming it left the
            # temp file; whoever holds the lock next clears those of processes that are gone.
            remove_stale_temps(self._manifest_path)
            self._sync(writer=True)
            self._fd = os.open(self._log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
            self._heal()
            self._depth = 1
            self._close_dangling_turn()
        except OSError as exc:
            # A session file that is a directory, a full or read-only disk: say which file.
            self._depth = 0
            self._release()
            raise self._unwritable(exc) from exc
        except BaseException:
            self._depth = 0
            self._release()
            raise

    def _unwritable(self, exc: OSError) -> StoreError:
        """Why the session cannot be written, naming the session file at fault."""
        name = self.directory.name
        for path in (self._manifest_path, self._log_path):
            if path.exists() and not path.is_file():
                kind = "a directory" if path.is_dir() else "not a regular file"
                return StoreError(
                    f"cannot write session {name}: {path.name} is {kind} ({path})",
                    hint=f"move {path} out of the way (nothing was written; the session can "
                    "still be read)"
                    + (
                        "; xum writes a new manifest from the log on the next write"
                        if path == self._manifest_path
                        else ""
                    ),
                )
        return StoreError(
            f"cannot write session {name}: {exc.strerror or exc} ({exc.filename or self.directory})",
            hint="nothing was written; fix or move that file (the session can still be read)",
        )

    def end_write(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0:
            self._release()

    @contextlib.contextmanager
    def writing(
        self, purpose: str | None = None, timeout: float | None = None
    ) -> Iterator[SessionLog]:
        """Hold the writer lock for a block, typically one turn."""
        self.begin_write(purpose, timeout)
        try:
            yield self
        finally:
            self.end_write()

    def recover(self) -> None:
        """Take the lock once to heal the log and close a turn a crash left open."""
        with self.writing("recover"):
            pass

    def append(self, event_type: str, data: Mapping[str, Any]) -> Frame:
        """Append one frame as given, unchecked (tests and tools; the engine's writers build
        typed frames with `events.spec` and use `append_many`)."""
        return self.append_many([ev.unchecked(event_type, data)])[0]

    def append_many(self, events: Sequence[Event]) -> list[Frame]:
        """Append frames and publish them together: after a crash either all are in the log or
        none is. Outside `writing()` the lock is taken for just this call."""
        if not events:
            return []
        if self._depth:
            return self._append_locked(events)
        with self.writing("append"):
            return self._append_locked(events)

    # Partial message -------------------------------------------------------------------------

    def write_partial(self, data: Mapping[str, Any]) -> None:
        from xum.store import partial  # while a reply streams: not needed to open a log

        try:
            partial.write_partial(self.directory, self._last_seq, data)
        except FileNotFoundError:  # the session directory is made by begin_write
            ensure_private_dir(self.directory)
            partial.write_partial(self.directory, self._last_seq, data)

    def read_partial(self) -> Partial | None:
        from xum.store import partial

        return partial.read_partial(self.directory)

    def delete_partial(self) -> None:
        from xum.store import partial

        partial.delete_partial(self.directory)

    # Lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        self._depth = 0
        self._release()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Internals -------------------------------------------------------------------------------

    def _adopt(self, loaded: Loaded) -> None:
        self._frames: list[Frame] = loaded.frames
        self._size = loaded.size
        self._hasher: Hasher = loaded.hasher
        self._last_seq = loaded.last_seq
        self._damaged = loaded.damaged
        self._missing = loaded.missing
        self._disk_manifest = loaded.manifest_read.manifest
        self._manifest_sig = loaded.manifest_read.sig
        self._log_sig = loaded.log_sig
        self._pad_newline = loaded.pad_newline
        self._regular = not self._damaged and self._last_seq == len(self._frames)

    def _published(self) -> Manifest:
        return Manifest(
            size=self._size,
            frames=len(self._frames),
            last_seq=self._last_seq,
            sha256=self._hasher.hexdigest(),
            damaged=list(self._damaged),
            missing=list(self._missing),
        )

    def _sync(self, *, writer: bool) -> SyncResult:
        """Bring this object up to date with the files. As a writer, refuse anything but frames
        another xum writer published after ours (or an unpublished tail past the boundary)."""
        manifest_sig = stat_signature(self._manifest_path)
        log_sig = stat_signature(self._log_path)
        if manifest_sig == self._manifest_sig and log_sig == self._log_sig:
            return "unchanged"
        mread = read_manifest(self._manifest_path)
        on_disk = mread.manifest
        if (
            on_disk is not None
            # The same boundary as before, or exactly what we hold (another writer healed the
            # same scan we did), and our bytes are intact: at most a crash tail appeared.
            and on_disk in (self._disk_manifest, self._published())
            and self._region_intact()
        ):
            self._disk_manifest, self._manifest_sig, self._log_sig = on_disk, mread.sig, log_sig
            return "unchanged"
        if (
            not writer
            and on_disk is None
            and mread.sig is None
            and self._disk_manifest is None
            and self._region_intact()
        ):
            # A first writer between its first append and its first manifest: what it appended
            # is not published yet. Wait for the manifest (the next refresh looks again) instead
            # of reading the log as rewritten, which would start every subscriber over.
            return "unchanged"
        if on_disk is not None and self._extend_to(on_disk):
            self._disk_manifest, self._manifest_sig = on_disk, mread.sig
            self._log_sig = stat_signature(self._log_path)
            return "appended"
        if writer:
            raise SessionChangedError(
                f"the log of session {self.directory.name} changed outside this writer "
                f"({self._log_path})",
                hint="nothing was written; reopen the session to continue from what is on disk",
            )
        self._adopt(load_log(self._log_path, self._manifest_path))
        self.generation += 1
        return "reloaded"

    def _region_intact(self) -> bool:
        """True when the bytes below our boundary still hash to what we published."""
        try:
            fd = os.open(self._log_path, os.O_RDONLY)
        except FileNotFoundError:
            return self._size == 0
        # A missing final newline is part of what we published (the scan counted it).
        want = self._size - 1 if self._pad_newline else self._size
        try:
            data = read_all(fd, want)
        finally:
            os.close(fd)
        if len(data) != want:
            return False
        if self._pad_newline:
            data += b"\n"
        return hashlib.sha256(data).digest() == self._hasher.digest()

    def _extend_to(self, manifest: Manifest) -> bool:
        """Adopt frames another writer published after ours, when the manifest proves (by the
        running SHA-256) that our region is its prefix. False when it is not a pure extension."""
        if (
            manifest.size <= self._size
            or manifest.frames <= len(self._frames)
            or manifest.last_seq <= self._last_seq
        ):
            return False
        try:
            fd = os.open(self._log_path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            data = read_all(fd, manifest.size - self._size, self._size)
        finally:
            os.close(fd)
        hasher = self._hasher.copy()
        hasher.update(data)
        if (
            len(data) != manifest.size - self._size
            or not data.endswith(b"\n")
            or hasher.hexdigest() != manifest.sha256
            or data.count(b"\n") != manifest.frames - len(self._frames)
        ):
            return False
        first_line = len(self._frames)
        new_damaged = {line: seq for line, seq in manifest.damaged if line >= first_line}
        frames = decode_published(data, new_damaged, first_line)
        if frames is None:
            return False
        self._frames.extend(frames)
        self._size, self._hasher, self._last_seq = manifest.size, hasher, manifest.last_seq
        self._damaged, self._missing = list(manifest.damaged), list(manifest.missing)
        self._regular = self._regular and not new_damaged and self._last_seq == len(self._frames)
        return True

    def _heal(self) -> None:
        """Under the lock: drop an unpublished tail and publish what a scan found, if needed."""
        assert self._fd is not None
        if self._disk_manifest is not None and self._disk_manifest.v > MANIFEST_VERSION:
            raise StoreError(
                f"session {self.directory.name} was written by a newer xum "
                f"(manifest version {self._disk_manifest.v})",
                hint="upgrade xum to continue this session",
            )
        # (_sync made sure the file holds at least our published bytes; never extend it, except
        # by the newline a hand edit took from the last published line.)
        on_disk = os.fstat(self._fd).st_size
        if self._pad_newline and on_disk == self._size - 1:
            _write_all(self._fd, b"\n")
            os.fdatasync(self._fd)
        elif on_disk > self._size:
            os.ftruncate(self._fd, self._size)
            os.fdatasync(self._fd)
        self._pad_newline = False
        wanted = self._published()
        if self._disk_manifest != wanted:
            self._manifest_sig = write_manifest(self._manifest_path, wanted)
            self._disk_manifest = wanted
        self._log_sig = signature(os.fstat(self._fd))

    def _check_unchanged(self) -> None:
        if (
            stat_signature(self._log_path) != self._log_sig
            or stat_signature(self._manifest_path) != self._manifest_sig
        ):
            raise SessionChangedError(
                f"the log of session {self.directory.name} changed on disk while this process "
                f"was writing it ({self._log_path}); the append was refused",
                hint="something outside xum modified the session files; reopen the session",
            )

    def _append_locked(self, events: Sequence[Event]) -> list[Frame]:
        fd = self._fd
        assert fd is not None
        self._check_unchanged()
        if self._last_seq + len(events) > MAX_SEQ:
            raise StoreError(
                f"session {self.directory.name} has used up its sequence numbers (the last one "
                f"is {self._last_seq}; the largest a session can hold is {MAX_SEQ})",
                hint="nothing was written; start a new session (this one can still be read)",
            )
        ts = now_ms()
        seq = self._last_seq
        lines = []
        for event_type, data in events:
            seq += 1
            lines.append(encode_frame(seq, event_id(), ts, event_type, data))
        blob = b"".join(lines)
        hasher = self._hasher.copy()
        hasher.update(blob)
        manifest = Manifest(
            size=self._size + len(blob),
            frames=len(self._frames) + len(lines),
            last_seq=seq,
            sha256=hasher.hexdigest(),
            damaged=self._damaged,
            missing=self._missing,
        )
        try:
            _write_all(fd, blob)
            # The frames and the new manifest are flushed (side by side) before the manifest
            # points past them.
            manifest_sig = sync_and_publish(fd, self._manifest_path, manifest)
            log_sig = signature(os.fstat(fd))
        except BaseException as exc:
            published = self._after_failed_append(manifest, lines, hasher)
            if not published and isinstance(exc, OSError):
                raise StoreError(
                    f"cannot append to session {self.directory.name}: {exc.strerror}",
                    hint="check free disk space and permissions; nothing was published",
                ) from exc
            raise
        return self._commit(lines, hasher, manifest, log_sig, manifest_sig)

    def _commit(
        self,
        lines: list[bytes],
        hasher: Hasher,
        manifest: Manifest,
        log_sig: Signature,
        manifest_sig: Signature,
    ) -> list[Frame]:
        # Decode what was written rather than keep the caller's objects: the frames in memory
        # are then exactly what a reopen will read (and the caller may reuse its dicts).
        frames = [frame for frame in map(decode_trusted, lines) if frame is not None]
        assert len(frames) == len(lines)
        self._frames.extend(frames)
        self._size, self._hasher, self._last_seq = manifest.size, hasher, manifest.last_seq
        self._disk_manifest = manifest
        self._log_sig, self._manifest_sig = log_sig, manifest_sig
        self._regular = self._regular and self._last_seq == len(self._frames)
        return frames

    def _after_failed_append(self, attempted: Manifest, lines: list[bytes], hasher: Hasher) -> bool:
        """After an append was interrupted: True if it was published after all (the state is
        updated to match), otherwise the unpublished bytes are cut off again."""
        mread = read_manifest(self._manifest_path)
        if mread.manifest == attempted:
            self._commit(lines, hasher, attempted, stat_signature(self._log_path), mread.sig)
            return True
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
        self._log_sig = stat_signature(self._log_path)
        self._manifest_sig = mread.sig
        return False

    def _close_dangling_turn(self) -> None:
        """Close a turn whose writer died in it: a synthetic error result for each tool call
        left without one, then `turn_end` (interrupted by a crash), published as one batch, so
        the provider history derived from the log is valid again."""
        dangling = open_turn(self._frames)
        if dangling is None:
            return
        turn_id, calls = dangling.turn_id, dangling.calls
        batch: list[Event] = [
            ev.spec(
                ev.TOOL_RESULT,
                {
                    "message": ev.tool_result_message(
                        call_id, name, ev.INTERRUPTED_OUTPUT, is_error=True
                    ),
                    "synthetic": True,
                },
            )
            for call_id, name in calls.items()
        ]
        batch.append(
            ev.spec(
                ev.TURN_END, {"turn_id": turn_id, "reason": "interrupted", "cause": ev.CRASH_CAUSE}
            )
        )
        self._append_locked(batch)
        self.delete_partial()  # the message that was streaming died with the turn

    def _release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _busy(name: str, holder: dict[str, object] | None, waited: float) -> SessionBusyError:
    if holder:
        who = (
            f"pid {holder.get('pid', '?')} on host {holder.get('host') or socket.gethostname()}"
            f" ({holder.get('purpose') or 'no purpose given'})"
        )
    else:
        who = "another process"
    return SessionBusyError(
        f"session {name} is busy: {who} is writing to it (waited {waited:g}s)",
        hint="wait for that turn to finish and try again, or stop that process; "
        "the session can still be read meanwhile",
    )
