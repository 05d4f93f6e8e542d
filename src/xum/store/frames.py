"""One frame = one line of `chat.jsonl`: encoding, checksums and decoding.

A line is an orjson object whose last member is a checksum over every byte before it:

    {"v":1,"seq":7,"id":"ev_...","ts":1700000000000,"type":"user_message","data":{...},"crc":"1a2b3c4d"}

The checksum is CRC32 (hex, 8 digits) of the line up to, not including, `,"crc":`. Because it is
last and fixed-width, checking a line is one slice and one `zlib.crc32`, with no re-serializing,
so a damaged line can be pinpointed even when it no longer parses.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

FRAME_VERSION = 1
# The largest sequence number a log may hold: the largest integer JSON readers agree on (a
# JavaScript number is exact up to 2^53 - 1). A line or a manifest claiming more is damage, not a
# session nobody could ever append to again.
MAX_SEQ = 2**53 - 1

# `,"crc":"` + 8 hex digits + `"}` + `\n`
_CRC_OPEN = b',"crc":"'
_CRC_CLOSE = b'"}\n'
_TRAILER_LEN = len(_CRC_OPEN) + 8 + len(_CRC_CLOSE)


@dataclass(slots=True)
class Frame:
    """A frame as readers see it.

    An intact frame has every field from disk. A damaged frame (its checksum or its shape is
    wrong) has `damaged=True`, `raw` holding the line exactly as it is on disk, empty `type`,
    `id` and `data`, and `seq` set only when the position it occupies could be inferred.
    """

    seq: int | None
    id: str
    ts: int
    type: str
    data: dict[str, Any]
    damaged: bool = False
    raw: bytes | None = None

    def may_contain(self, needle: bytes) -> bool:
        """False only when the frame's line on disk certainly does not contain `needle`: lets a
        reader skip decoding a `LazyFrame` it does not need (always True for a decoded one)."""
        return True


class LogLines:
    """The log file that a load's `LazyFrame`s read their lines from: a descriptor of the file
    as it was loaded (duplicated from the loader's), closed when the last of them is gone.

    It also answers "which lines contain these bytes" for the whole published region at once
    (`starts`: every line's offset, in order; `size`: the boundary), by one pass of `bytes.find`
    over the file, remembered per needle: a reader that looks for one rare key in every tool
    result (the todo list, MCP tools loaded, goals) then reads the log once, not line by line.
    """

    __slots__ = ("_fd", "_found", "path", "size", "starts")

    def __init__(self, fd: int, path: str) -> None:
        self.path = path
        self._fd = os.dup(fd)
        self.starts: array[int] = array("q")
        self.size = 0
        self._found: dict[bytes, frozenset[int]] = {}

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, offset)

    def lines_containing(self, needle: bytes, chunk: int = 4 << 20) -> frozenset[int]:
        """The offsets of the lines (below `size`) in which `needle` occurs; the file is read
        `chunk` bytes at a time."""
        found = self._found.get(needle)
        if found is None:
            found = frozenset(self._scan(needle, chunk))
            self._found[needle] = found
        return found

    def _scan(self, needle: bytes, chunk: int) -> Iterator[int]:
        offset, keep = 0, max(len(needle) - 1, 0)
        carry = b""
        while offset < self.size:
            data = carry + self.read(offset, min(chunk, self.size - offset))
            if len(data) == len(carry):
                return
            base = offset - len(carry)
            at = data.find(needle)
            while at >= 0:
                yield self.starts[bisect_right(self.starts, base + at) - 1]
                at = data.find(needle, at + 1)
            offset = base + len(data)
            carry = data[max(len(data) - keep, 0) :] if keep else b""

    def __del__(self, _close: Any = os.close) -> None:  # os may be gone at interpreter exit
        with contextlib.suppress(OSError, AttributeError):
            _close(self._fd)


class LazyFrame(Frame):
    """An intact frame whose `data` stays on disk until it is read, and is decoded again on
    every read (nothing is kept): what a log holds for the frames before its last boundary, so
    that opening a long session costs memory for its current segment only.

    Its line is at `offset` in `lines`, below the published boundary; those bytes never change
    while the log is the same file (a writer only appends; any other change makes the log
    reload, replacing these objects). A line whose checksum no longer matches when it is read
    (the file was edited in place) raises `SessionChangedError`.
    """

    __slots__ = ("_length", "_lines", "_offset")

    def __init__(
        self,
        seq: int,
        event_id: str,
        ts: int,
        event_type: str,
        lines: LogLines,
        offset: int,
        length: int,
    ) -> None:
        self.seq, self.id, self.ts, self.type = seq, event_id, ts, event_type
        self.damaged, self.raw = False, None
        self._lines, self._offset, self._length = lines, offset, length

    @property
    def data(self) -> dict[str, Any]:
        # The line was whole and published when the log was loaded: check it is still the same
        # (its checksum) and take its data, without building a frame (readers that go through
        # a whole log, such as resume's costs, do this for tens of thousands of lines).
        line = self.line()
        if line.endswith(b"\r\n"):  # converted line endings are read as LF (see checksum_ok)
            line = line[:-2] + b"\n"
        head = line[:-_TRAILER_LEN]
        obj: Any = None
        if line[-_TRAILER_LEN:] == _CRC_OPEN + b"%08x" % zlib.crc32(head) + _CRC_CLOSE:
            with contextlib.suppress(orjson.JSONDecodeError):
                obj = orjson.loads(line)
        data = obj.get("data") if isinstance(obj, dict) and obj.get("seq") == self.seq else None
        if type(data) is not dict:
            from xum.core.errors import SessionChangedError

            raise SessionChangedError(
                f"the session log {self._lines.path} changed under this reader (frame {self.seq})",
                hint="reopen the session to read what is on disk now",
            )
        return data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        raise AttributeError("a LazyFrame's data is read from the log")

    def __eq__(self, other: object) -> bool:
        # Equal to the decoded frame of the same line (a reopened log holds lazy frames where
        # the writer's object holds decoded ones).
        if not isinstance(other, Frame):
            return NotImplemented
        return (self.seq, self.id, self.ts, self.type, self.damaged, self.raw, self.data) == (
            other.seq,
            other.id,
            other.ts,
            other.type,
            other.damaged,
            other.raw,
            other.data,
        )

    __hash__ = None  # type: ignore[assignment]

    def line(self) -> bytes:
        """The frame's line as it is on disk (newline included)."""
        return self._lines.read(self._offset, self._length)

    def may_contain(self, needle: bytes) -> bool:
        return self._offset in self._lines.lines_containing(needle)


def encode_frame(seq: int, event_id: str, ts: int, event_type: str, data: Any) -> bytes:
    """The line (newline included) for one frame. Raises `TypeError` for data orjson cannot write."""
    body = orjson.dumps(
        {"v": FRAME_VERSION, "seq": seq, "id": event_id, "ts": ts, "type": event_type, "data": data}
    )
    head = body[:-1]  # drop the closing brace; the checksum member closes the object
    return head + _CRC_OPEN + b"%08x" % zlib.crc32(head) + _CRC_CLOSE


def checksum_ok(line: bytes) -> bool:
    """True when `line` (with its newline) ends in a checksum that matches the bytes before it.
    A CRLF ending counts as a newline (an editor or a sync tool may have converted the file; the
    checksummed bytes before it are unchanged)."""
    if line.endswith(b"\r\n"):
        line = line[:-2] + b"\n"
    if len(line) <= _TRAILER_LEN or not line.endswith(_CRC_CLOSE):
        return False
    trailer = line[-_TRAILER_LEN:]
    if not trailer.startswith(_CRC_OPEN):
        return False
    return (
        b"%08x" % zlib.crc32(line[:-_TRAILER_LEN]) == trailer[len(_CRC_OPEN) : 8 + len(_CRC_OPEN)]
    )


def frame_from_dict(obj: Any) -> Frame | None:
    """The frame a decoded line describes, or None when its shape is wrong."""
    if not isinstance(obj, dict):
        return None
    seq, event_id, ts, event_type, data = (
        obj.get("seq"),
        obj.get("id"),
        obj.get("ts"),
        obj.get("type"),
        obj.get("data"),
    )
    if (
        type(seq) is not int
        or not 1 <= seq <= MAX_SEQ
        or type(event_id) is not str
        or type(ts) is not int
        or type(event_type) is not str
        or type(data) is not dict
    ):
        return None
    return Frame(seq, event_id, ts, event_type, data)


def decode_trusted(line: bytes) -> Frame | None:
    """Decode a line whose bytes are already vouched for (by the manifest's SHA-256)."""
    try:
        return frame_from_dict(orjson.loads(line))
    except orjson.JSONDecodeError:
        return None


def decode_verified(line: bytes) -> Frame | None:
    """Decode a line of unknown integrity: its checksum must match and its shape must be right."""
    if not checksum_ok(line):
        return None
    return decode_trusted(line)


def damaged_frame(line: bytes, seq: int | None) -> Frame:
    return Frame(seq, "", 0, "", {}, damaged=True, raw=line)


def damage_reason(line: bytes) -> str:
    """Why a quarantined line is not a frame, in a few words for listings."""
    if not line.rstrip(b"\r\n"):
        return "an empty line"
    if not checksum_ok(line if line.endswith(b"\n") else line + b"\n"):
        return "its checksum does not match (edited or cut short)"
    if decode_trusted(line) is None:
        return "not a valid frame (a field is missing or of the wrong type)"
    return "out of order (its seq repeats or goes back; an earlier frame holds it)"


def loose_seq(line: bytes) -> int | None:
    """The `seq` a damaged line still claims, when it still parses; used only as a hint."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if type(seq) is int and 1 <= seq <= MAX_SEQ else None
