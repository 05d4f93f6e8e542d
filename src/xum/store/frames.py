"""One frame = one line of `chat.jsonl`: encoding, checksums and decoding.

A line is an orjson object whose last member is a checksum over every byte before it:

    {"v":1,"seq":7,"id":"ev_...","ts":1700000000000,"type":"user_message","data":{...},"crc":"1a2b3c4d"}

The checksum is CRC32 (hex, 8 digits) of the line up to, not including, `,"crc":`. Because it is
last and fixed-width, checking a line is one slice and one `zlib.crc32`, with no re-serializing,
so a damaged line can be pinpointed even when it no longer parses.
"""

from __future__ import annotations

import zlib
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
