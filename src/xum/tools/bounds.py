"""Bounded tool output: keep the head and the tail, spill the whole stream to a file.

A command may print gigabytes; the model sees at most `head + tail` bytes with an explicit
marker naming how much was cut and where the full text is. Memory stays bounded whatever the
volume: bytes go to the spill file as they arrive and only the head and a trimmed tail are
kept. Small outputs never touch the disk: the spill file is created only once the stream
outgrows what the model would see anyway. The spill file keeps the first `Runtime.spill_cap`
bytes (`SPILL_CAP_BYTES` unless told); beyond that it says how much it dropped. The tail the
model sees is always the real end of the stream.

A spill file is written on xum's machine; when the command ends it is handed to the runtime's
`publish_file`, which says where the model's tools read it (on an SSH workspace they look on the
remote host, so it is copied into the runtime's remote scratch dir) and the marker names that
path. If that copy fails, the marker says plainly that the file is on xum's machine and cannot
be read from the host. `SpillPlace` keeps that state for bash's capture and for background
processes alike.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from xum.core.ids import sortable_id
from xum.core.paths import FILE_MODE, ensure_private_dir
from xum.runtime.base import SPILL_CAP_BYTES, Runtime

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 16 * 1024
# A cut prefers a line boundary when one lies this close to the byte limit.
_LINE_SNAP_BYTES = 2048


def spill_dir(scratch_dir: str) -> Path:
    return Path(scratch_dir) / "tool-output"


def new_spill_path(scratch_dir: str, suffix: str = ".log") -> Path:
    return spill_dir(scratch_dir) / f"{sortable_id()}{suffix}"


def local_only(path: Path | str, reason: str) -> str:
    """The marker text for a spill file that stayed on xum's machine of an SSH workspace."""
    return (
        f"the full output is kept on xum's machine at {path}, which tools on the remote host "
        f"cannot read ({reason})"
    )


@dataclass(slots=True)
class SpillPlace:
    """Where a spill file is for the runtime's tools: at `local` until `publish` hands it to the
    runtime (which may move it, see `Runtime.publish_file`)."""

    local: Path
    # Whether the tools read `local` before it is published (`Runtime.sees_local_files`).
    visible: bool = True
    published: str | None = None  # where the runtime's tools read it, once published
    failure: str | None = None  # why publishing failed (the file stayed at `local`)

    async def publish(self, runtime: Runtime) -> None:
        """Once: hand the (closed) file to the runtime; a failure is noted, never raised."""
        if self.published is not None or self.failure is not None:
            return
        try:
            self.published = await runtime.publish_file(self.local)
        except OSError as exc:
            self.failure = str(exc.strerror or exc)

    @property
    def path(self) -> str:
        """The path to report (meta): where the tools read it, else where it is."""
        return self.published or str(self.local)

    def where(self, label: str = "full output", *, pending: str = "") -> str:
        """How a marker names the file: `<label>: <path>` where the tools can read it; otherwise
        that it is on xum's machine, and why (`pending`: why, while it is not published yet)."""
        if self.failure is not None:
            return local_only(self.local, self.failure)
        if self.published is None and not self.visible:
            return local_only(self.local, pending)
        return f"{label}: {self.path}"


class HeadTailCapture:
    """Feed bytes in; read back a bounded text rendering plus facts about the stream."""

    def __init__(
        self,
        spill_path: Path,
        *,
        head_bytes: int = HEAD_BYTES,
        tail_bytes: int = TAIL_BYTES,
        spill_cap: int = SPILL_CAP_BYTES,
    ) -> None:
        self.spill_path = spill_path
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.spill_cap = spill_cap
        self.total = 0
        self.spilled_bytes = 0
        self._head = bytearray()
        self._tail = bytearray()  # bytes after the head; trimmed to tail_bytes lazily
        self._fd: int | None = None
        self._spill_error: str | None = None
        self._place = SpillPlace(spill_path)

    @property
    def spilled(self) -> bool:
        return self._fd is not None or self.spilled_bytes > 0

    @property
    def truncated(self) -> bool:
        return self.total > self.head_bytes + self.tail_bytes

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        limit = self.head_bytes + self.tail_bytes
        crossing = self.total <= limit < self.total + len(chunk)
        self.total += len(chunk)
        room = self.head_bytes - len(self._head)
        rest = chunk
        if room > 0:
            self._head += chunk[:room]
            rest = chunk[room:]
        self._tail += rest
        if crossing:
            # Until now head + tail held the whole stream (no trim happens below the limit).
            self._open_spill()
            self._spill(bytes(self._head) + bytes(self._tail))
        elif self._fd is not None:
            self._spill(chunk)
        # Trim rarely (amortized): only once the buffer holds twice what is kept.
        if len(self._tail) > 2 * self.tail_bytes:
            del self._tail[: len(self._tail) - self.tail_bytes]

    def _open_spill(self) -> None:
        try:
            ensure_private_dir(self.spill_path.parent)
            self._fd = os.open(
                self.spill_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE
            )
        except OSError as exc:
            self._spill_error = f"{exc.strerror or exc}"

    def _spill(self, data: bytes) -> None:
        if self._fd is None:
            return
        room = self.spill_cap - self.spilled_bytes
        if room <= 0:
            return
        view = memoryview(data)[:room]
        try:
            while view:
                written = os.write(self._fd, view)
                self.spilled_bytes += written
                view = view[written:]
        except OSError as exc:  # disk full: the head and tail still reach the model
            self._spill_error = f"{exc.strerror or exc}"
            self.close()

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if self.total > self.spilled_bytes and self._spill_error is None:
            note = f"\n[xum: spill file capped; {self.total - self.spilled_bytes:,} more bytes dropped]\n"
            with contextlib.suppress(OSError):
                os.write(fd, note.encode())
        os.close(fd)

    async def publish(self, runtime: Runtime) -> None:
        """After `close`: hand the spill file to the runtime (`Runtime.publish_file`: on SSH it
        moves to the host); a no-op when nothing was spilled."""
        if not self.spilled_bytes or self._spill_error is not None:
            return
        await self._place.publish(runtime)

    def render(self) -> str:
        """The whole stream when it fits; otherwise head, omission marker, tail."""
        if not self.truncated:
            return _decode(bytes(self._head) + bytes(self._tail))
        head = _snap_head(bytes(self._head))
        tail = _snap_tail(bytes(self._tail[-self.tail_bytes :]))
        omitted = self.total - len(head) - len(tail)
        head_text = _decode(head)
        gap = "" if head_text.endswith("\n") or not head_text else "\n"
        return f"{head_text}{gap}{self._marker(omitted)}\n{_decode(tail)}"

    def _marker(self, omitted: int) -> str:
        if self.spilled_bytes and self._spill_error is None:
            capped = self.spilled_bytes < self.total
            where = self._place.where(
                f"first {self.spilled_bytes:,} bytes in" if capped else "full output"
            )
        elif self._spill_error:
            where = f"the spill file could not be written ({self._spill_error})"
        else:
            where = "not kept"
        return f"[... {omitted:,} bytes omitted; {where} ...]"

    def spill_path_if_any(self) -> str | None:
        """Where the spill file is (on the SSH host once moved there), or None."""
        if not self.spilled_bytes:
            return None
        return self._place.path


async def bound_text(
    text: str,
    *,
    runtime: Runtime,
    scratch_dir: str,
    suffix: str,
    head_bytes: int,
    tail_bytes: int,
) -> tuple[str, str | None]:
    """Bound a finished text the same way; returns (text for the model, spill path or None).
    The spill file is handed to the runtime (moved to the host on SSH), as bash's is."""
    capture = HeadTailCapture(
        new_spill_path(scratch_dir, suffix),
        head_bytes=head_bytes,
        tail_bytes=tail_bytes,
        spill_cap=runtime.spill_cap,
    )
    try:
        capture.feed(text.encode("utf-8"))
    finally:
        capture.close()
    await capture.publish(runtime)
    return capture.render(), capture.spill_path_if_any()


def clip_middle(data: bytes, *, head_bytes: int, tail_bytes: int, where: str) -> str:
    """`data` as text when it fits in head + tail; otherwise head, a marker naming `where` the
    rest can be read, and tail, cut at line breaks where possible (nothing is written)."""
    if len(data) <= head_bytes + tail_bytes:
        return _decode(data)
    head = _snap_head(data[:head_bytes])
    tail = _snap_tail(data[-tail_bytes:])
    omitted = len(data) - len(head) - len(tail)
    head_text = _decode(head)
    gap = "" if head_text.endswith("\n") or not head_text else "\n"
    return f"{head_text}{gap}[... {omitted:,} bytes omitted; {where} ...]\n{_decode(tail)}"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _snap_head(data: bytes) -> bytes:
    """End the head at a line break near its end, else at a UTF-8 character boundary."""
    cut = data.rfind(b"\n", max(0, len(data) - _LINE_SNAP_BYTES))
    if cut >= 0:
        return data[: cut + 1]
    end = len(data)
    # Back off from a multi-byte sequence cut in half (continuation bytes are 0b10xxxxxx).
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte & 0xC0 != 0x80:
            needed = (
                1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            )
            return data if needed <= back else data[: end - back]
    return data


def _snap_tail(data: bytes) -> bytes:
    """Start the tail after a line break near its start, else at a character boundary."""
    cut = data.find(b"\n", 0, _LINE_SNAP_BYTES)
    if 0 <= cut < len(data) - 1:
        return data[cut + 1 :]
    start = 0
    while start < min(4, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]
