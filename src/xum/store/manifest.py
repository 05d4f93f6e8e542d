"""`chat.manifest.json`: the published boundary of a session log.

Only bytes below `size` exist for readers. The manifest is replaced atomically (temp file, fsync,
rename, directory fsync) after the frame bytes it covers are on disk, so a crash leaves either
the old boundary or the new one, never a boundary over bytes that were not written.

It also carries what recovery learnt, so the next open takes the fast path: the lines that are
quarantined as damaged (`damaged`: `[line index, seq or null]`) and the sequence numbers for which
no frame exists any more (`missing`: inclusive `[first, last]` ranges).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.store.frames import MAX_SEQ

MANIFEST_VERSION = 1
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

# (inode, size, mtime_ns) of a file as last seen; None when it did not exist.
Signature = tuple[int, int, int] | None


def signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def stat_signature(path: Path) -> Signature:
    try:
        return signature(os.stat(path))
    except FileNotFoundError:
        return None


@dataclass(slots=True)
class Manifest:
    """The published boundary of a session log (`chat.manifest.json`)."""

    size: int = 0  # the byte boundary: readers stop here
    frames: int = 0  # lines below the boundary, damaged ones included
    last_seq: int = 0  # the highest sequence number ever published
    sha256: str = EMPTY_SHA256  # of every byte below the boundary
    damaged: list[tuple[int, int | None]] = field(default_factory=list)
    missing: list[tuple[int, int]] = field(default_factory=list)
    v: int = MANIFEST_VERSION

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "v": self.v,
                "size": self.size,
                "frames": self.frames,
                "last_seq": self.last_seq,
                "sha256": self.sha256,
                "damaged": [list(d) for d in self.damaged],
                "missing": [list(m) for m in self.missing],
            }
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> Manifest | None:
        """The manifest `raw` encodes, or None when it is not one (never trusts a bad shape)."""
        return parse_manifest(raw)[0]


def parse_manifest(raw: bytes) -> tuple[Manifest | None, str | None]:
    """(the manifest `raw` encodes, None) or (None, why it is not one)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, "not a valid manifest (not JSON)"
    if not isinstance(obj, dict):
        return None, "not a valid manifest (not a JSON object)"
    try:
        last_seq = _nat(obj["last_seq"])
        if last_seq > MAX_SEQ:
            return None, (
                f"not a valid manifest: last_seq {last_seq} is past the largest sequence number "
                f"a session can hold ({MAX_SEQ})"
            )
        return _from_object(obj, last_seq), None
    except (KeyError, IndexError, TypeError, ValueError):
        return None, "not a valid manifest (a field is missing or has the wrong type)"


def _from_object(obj: dict[str, Any], last_seq: int) -> Manifest:
    return Manifest(
        size=_nat(obj["size"]),
        frames=_nat(obj["frames"]),
        last_seq=last_seq,
        sha256=_sha(obj["sha256"]),
        damaged=[(_nat(d[0]), _opt_seq(d[1])) for d in obj.get("damaged", [])],
        missing=[(_seq(m[0]), _seq(m[1])) for m in obj.get("missing", [])],
        v=_nat(obj.get("v", MANIFEST_VERSION)),
    )


def _nat(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(value)
    return value


def _seq(value: Any) -> int:
    if _nat(value) > MAX_SEQ:
        raise ValueError(value)
    return int(value)


def _opt_seq(value: Any) -> int | None:
    return None if value is None else _seq(value)


def _sha(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 64:
        raise ValueError(value)
    return value


@dataclass(slots=True)
class ManifestRead:
    """A manifest as read from disk, with the file's signature."""

    manifest: Manifest | None
    sig: Signature
    problem: str | None  # why `manifest` is None although the file exists


def read_manifest(path: Path) -> ManifestRead:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return ManifestRead(None, None, None)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ManifestRead(None, signature(st), "not a valid manifest (not a regular file)")
        raw = os.read(fd, st.st_size + 1)
    finally:
        os.close(fd)
    manifest, problem = parse_manifest(raw)
    return ManifestRead(manifest, signature(st), problem)


def write_manifest(path: Path, manifest: Manifest) -> Signature:
    """Publish `manifest` durably; returns the signature of the file now in place."""
    atomic_write_bytes(path, manifest.to_bytes())
    return stat_signature(path)
