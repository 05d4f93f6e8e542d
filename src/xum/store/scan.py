"""Loading a session log: the fast path the manifest vouches for, and the scan that heals.

Fast path: the SHA-256 of the bytes below the manifest's boundary matches the manifest. Those
bytes are exactly what a writer published, so every line is decoded without checking it again
(the lines the manifest lists as quarantined are handed out as damaged frames).

Scan: anything else (a hand-edited or lost line, a bad disk block, a boundary past the end of the
file, a missing or unreadable manifest). Every line's checksum is verified, and the published
frames are found by sequence number, not by the manifest's byte offset, so an edit that changes
a line's length does not hide the frames after it. Lines that fail are quarantined: kept on disk
untouched and handed to readers as damaged frames. A line ending in CRLF is read as if it ended in
LF (the checksum covers the bytes before the line ending). A last line without its newline is
still a line: kept when it is published, cut only when it is an unpublished tail. Nothing is
written here; a writer publishes what the scan found (see `SessionLog`), adding the missing
newline first.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import math
import os
import re
import stat
import sys
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from xum.core.errors import StoreError
from xum.store import frame_types as ev
from xum.store.frames import (
    MAX_SEQ,
    Frame,
    LazyFrame,
    LogLines,
    damaged_frame,
    decode_verified,
    frame_from_dict,
    loose_seq,
)
from xum.store.manifest import Manifest, ManifestRead, Signature, read_manifest, signature

if TYPE_CHECKING:
    from hashlib import _Hash as Hasher


@dataclass(slots=True, eq=False)
class Loaded:
    """A session log as read from disk."""

    frames: list[Frame]
    size: int  # the published boundary in bytes
    hasher: Hasher  # SHA-256 of the bytes below `size`, ready to be extended
    last_seq: int  # the highest sequence number published; the next frame gets last_seq + 1
    damaged: list[tuple[int, int | None]]  # quarantined lines: (line index, seq or None)
    missing: list[tuple[int, int]]  # inclusive seq ranges no frame on disk accounts for
    file_size: int  # bytes on disk; anything past `size` is an unpublished tail
    manifest_read: ManifestRead
    log_sig: Signature
    fast: bool  # True when the manifest vouched for the bytes
    # The published region ends in a line whose newline is missing from the file (a hand edit
    # removed it): `size` counts that newline, and the next writer adds it before appending.
    pad_newline: bool = False

    def as_manifest(self) -> Manifest:
        """The manifest that publishes exactly what was loaded."""
        return Manifest(
            size=self.size,
            frames=len(self.frames),
            last_seq=self.last_seq,
            sha256=self.hasher.hexdigest(),
            damaged=list(self.damaged),
            missing=list(self.missing),
        )


def read_all(fd: int, length: int, offset: int = 0) -> bytes:
    """`length` bytes at `offset` (fewer only at end of file)."""
    chunks = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def load_log(log_path: Path, manifest_path: Path) -> Loaded:
    mread = read_manifest(manifest_path)
    try:
        fd = os.open(log_path, os.O_RDONLY)
    except FileNotFoundError:
        return _scan(b"", mread, None)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(
                f"cannot read the session log {log_path}: it is not a regular file",
                hint="move it out of the way (the session's other files stay readable); "
                "xum never deletes or replaces it by itself",
            )
        sig = signature(st)
        manifest = mread.manifest
        if manifest is not None and manifest.size <= st.st_size:
            if manifest.size >= LAZY_MIN_BYTES:
                loaded = _fast_lazy(fd, log_path, manifest, mread, sig, st.st_size)
                if loaded is not None:
                    return loaded
            data = read_all(fd, manifest.size)
            loaded = _fast(data, manifest, mread, sig, st.st_size)
            if loaded is not None:
                return loaded
        data = read_all(fd, st.st_size)
    finally:
        os.close(fd)
    return _scan(data, mread, sig)


def _fast(
    data: bytes, manifest: Manifest, mread: ManifestRead, sig: Signature, file_size: int
) -> Loaded | None:
    hasher = hashlib.sha256(data)
    if hasher.hexdigest() != manifest.sha256 or (data and not data.endswith(b"\n")):
        return None
    if data.count(b"\n") != manifest.frames:
        return None
    frames = decode_published(data, dict(manifest.damaged), 0)
    if frames is None:
        return None
    return Loaded(
        frames=frames,
        size=manifest.size,
        hasher=hasher,
        last_seq=manifest.last_seq,
        damaged=list(manifest.damaged),
        missing=list(manifest.missing),
        file_size=file_size,
        manifest_read=mread,
        log_sig=sig,
        fast=True,
    )


# Logs at least this large load the frames before their last boundary as `LazyFrame`s.
LAZY_MIN_BYTES = 1 << 20
_CHUNK = 4 << 20
# The head of every line `encode_frame` writes, up to the data object: what a lazy frame keeps.
_HEAD = re.compile(
    rb'\{"v":1,"seq":(\d{1,16}),"id":"([^"\\]*)","ts":(-?\d{1,20}),"type":"([^"\\]*)","data":\{'
)


def _fast_lazy(
    fd: int, path: Path, manifest: Manifest, mread: ManifestRead, sig: Signature, file_size: int
) -> Loaded | None:
    """The fast path for a large log, reading it once in chunks: the SHA-256 is checked as for
    `_fast`, but only the frames from the last boundary (`compaction` or `context_reset`) on are
    decoded; earlier ones become `LazyFrame`s (their head fields only). Most of a long session's
    bytes are before that boundary, and the provider history, the context meter and the
    recorder need nothing before it; readers that walk the whole log (replay, resume's costs)
    decode those frames one at a time, keeping none. None when a line's head is not the one
    `encode_frame` writes (an older or a hand-made log): the caller decodes everything."""
    damaged = dict(manifest.damaged)
    hasher = hashlib.sha256()
    frames: list[Frame] = []
    hot, hot_offset = 0, 0  # the last boundary line: decoded from there on
    carry, base, offset, where = b"", 0, 0, LogLines(fd, str(path))
    boundary_types, intern = ev.BOUNDARY_TYPES, sys.intern
    with gc_paused():
        while offset < manifest.size:
            chunk = os.pread(fd, min(_CHUNK, manifest.size - offset), offset)
            if not chunk:
                return None
            offset += len(chunk)
            hasher.update(chunk)
            buf = carry + chunk if carry else chunk
            start = 0
            while (nl := buf.find(b"\n", start)) >= 0:
                index = len(frames)
                where.starts.append(base + start)
                if index in damaged:
                    frames.append(damaged_frame(buf[start : nl + 1], damaged[index]))
                else:
                    head = _HEAD.match(buf, start)
                    if head is None:
                        return None
                    seq, kind = int(head[1]), intern(head[4].decode())
                    if not 1 <= seq <= MAX_SEQ:
                        return None
                    at = base + start
                    frames.append(
                        LazyFrame(
                            seq, head[2].decode(), int(head[3]), kind, where, at, nl + 1 - start
                        )
                    )
                    if kind in boundary_types:
                        hot, hot_offset = index, at
                start = nl + 1
            carry, base = buf[start:], base + start
    if carry or hasher.hexdigest() != manifest.sha256 or len(frames) != manifest.frames:
        return None
    where.size = manifest.size
    decoded = decode_published(read_all(fd, manifest.size - hot_offset, hot_offset), damaged, hot)
    if decoded is None:
        return None
    frames[hot:] = decoded
    return Loaded(
        frames=frames,
        size=manifest.size,
        hasher=hasher,
        last_seq=manifest.last_seq,
        damaged=list(manifest.damaged),
        missing=list(manifest.missing),
        file_size=file_size,
        manifest_read=mread,
        log_sig=sig,
        fast=True,
    )


def decode_published(
    data: bytes, damaged: dict[int, int | None], first_line: int
) -> list[Frame] | None:
    """Frames of published lines (`data` ends with a newline); None if a line does not decode.

    `damaged` maps line indexes (counted from the start of the log; `data` begins at line
    `first_line`) to the seq a quarantined line occupies.
    """
    lines = data.split(b"\n")
    lines.pop()  # the empty piece after the last newline
    frames = []
    loads, from_dict = orjson.loads, frame_from_dict
    with gc_paused():
        try:
            for index, line in enumerate(lines, first_line):
                if damaged and index in damaged:
                    frames.append(damaged_frame(line + b"\n", damaged[index]))
                    continue
                frame = from_dict(loads(line))
                if frame is None:
                    return None
                frames.append(frame)
        except orjson.JSONDecodeError:
            return None
    return frames


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while decoding: a log is 100k+ fresh dicts with no cycles, and letting
    the collector rescan them as they pile up makes a load take twice as long."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _scan(data: bytes, mread: ManifestRead, sig: Signature) -> Loaded:
    manifest = mread.manifest
    bound = manifest.last_seq if manifest is not None else math.inf

    # Split into complete lines. An unterminated remainder is read as one more line (newline
    # added): a crash leaves one after the boundary, where the rules below treat it as the
    # unpublished tail it is, but a hand edit (the last newline removed, the last line cut short)
    # leaves one inside it, and those bytes are kept, as a frame or as a damaged one.
    lines: list[bytes] = []
    ends: list[int] = []
    start = 0
    while True:
        nl = data.find(b"\n", start)
        if nl < 0:
            break
        lines.append(data[start : nl + 1])
        ends.append(nl + 1)
        start = nl + 1
    if start < len(data):
        lines.append(data[start:] + b"\n")
        ends.append(len(data) + 1)
    unterminated = start < len(data)

    with gc_paused():
        decoded = [decode_verified(line) for line in lines]

    # The published region runs through the last intact line whose seq was published...
    last_intact = -1
    for index in range(len(lines) - 1, -1, -1):
        frame = decoded[index]
        if frame is not None and frame.seq is not None and frame.seq <= bound:
            last_intact = index
            break
    # ...of which the frames kept are the longest run of strictly increasing seqs: a copied,
    # pasted or reordered line is quarantined instead of hiding the frames around it.
    candidates = [
        (index, frame.seq)
        for index, frame in enumerate(decoded[: last_intact + 1])
        if frame is not None and frame.seq is not None and frame.seq <= bound
    ]
    kept = _longest_increasing(candidates)
    last_kept_seq = max((seq for index, seq in candidates if index in kept), default=0)

    # Past it, a damaged line is still published while published seqs are unaccounted for; the
    # first intact frame beyond the published seqs starts the unpublished tail.
    region_end = last_intact + 1
    unaccounted = bound - last_kept_seq
    for index in range(last_intact + 1, len(lines)):
        frame = decoded[index]
        if frame is not None or unaccounted <= 0:
            break
        claimed = loose_seq(lines[index])
        if claimed is not None and claimed > bound:
            break
        if unterminated and index == len(lines) - 1 and manifest is None:
            break  # without a manifest, a torn last line is what a crash leaves: a tail
        region_end = index + 1
        unaccounted -= 1

    frames: list[Frame] = []
    for index in range(region_end):
        frame = decoded[index]
        if frame is not None and index in kept:
            frames.append(frame)
        else:
            frames.append(damaged_frame(lines[index], None))
    _infer_damaged_seqs(frames, None if manifest is None else manifest.last_seq)

    known = [f.seq for f in frames if f.seq is not None]
    last_seq = max(manifest.last_seq if manifest else 0, max(known, default=0))
    size = ends[region_end - 1] if region_end else 0
    pad = size > len(data)
    return Loaded(
        frames=frames,
        size=size,
        hasher=hashlib.sha256(data[:size] + b"\n" if pad else data[:size]),
        last_seq=last_seq,
        damaged=[(i, f.seq) for i, f in enumerate(frames) if f.damaged],
        missing=_gaps(known, last_seq),
        file_size=len(data),
        manifest_read=mread,
        log_sig=sig,
        fast=False,
        pad_newline=pad,
    )


def _longest_increasing(items: list[tuple[int, int]]) -> set[int]:
    """Indexes of a longest subsequence of `(index, seq)` with strictly increasing seq. Of two
    lines claiming one seq, the first is kept: the frame written in its place comes first, and a
    copy or a forgery appended after it must not push it out."""
    tail_seqs: list[int] = []
    tail_at: list[int] = []  # position in `items` of the best tail for each length
    back = [-1] * len(items)
    for pos, (_, seq) in enumerate(items):
        length = bisect_left(tail_seqs, seq)
        if length < len(tail_seqs) and tail_seqs[length] == seq:
            continue  # the same seq as an earlier line ending as long a run: that one stays
        back[pos] = tail_at[length - 1] if length else -1
        if length == len(tail_seqs):
            tail_seqs.append(seq)
            tail_at.append(pos)
        else:
            tail_seqs[length] = seq
            tail_at[length] = pos
    kept: set[int] = set()
    pos = tail_at[-1] if tail_at else -1
    while pos >= 0:
        kept.add(items[pos][0])
        pos = back[pos]
    return kept


def _infer_damaged_seqs(frames: list[Frame], published_last: int | None) -> None:
    """Give each run of damaged frames the seqs it occupies, when that can be told.

    A run between intact frames `a` and `b` that is exactly `b - a - 1` lines long holds those
    seqs in order. Otherwise a damaged line that still parses and claims a seq strictly between
    its neighbours (and after the previous claim) keeps that claim; the rest stay unknown.
    """
    index = 0
    prev_seq = 0
    while index < len(frames):
        if not frames[index].damaged:
            prev_seq = frames[index].seq or prev_seq
            index += 1
            continue
        run_end = index
        while run_end < len(frames) and frames[run_end].damaged:
            run_end += 1
        if run_end < len(frames):
            next_seq: float = frames[run_end].seq or math.inf
        else:
            next_seq = published_last + 1 if published_last is not None else math.inf
        if next_seq - prev_seq - 1 == run_end - index:
            for offset in range(run_end - index):
                frames[index + offset].seq = prev_seq + 1 + offset
        else:
            floor = prev_seq
            for pos in range(index, run_end):
                raw = frames[pos].raw
                claimed = loose_seq(raw) if raw is not None else None
                if claimed is not None and floor < claimed < next_seq:
                    frames[pos].seq = floor = claimed
        index = run_end


def _gaps(known: list[int], last_seq: int) -> list[tuple[int, int]]:
    """Inclusive ranges of 1..last_seq missing from `known` (which is strictly increasing)."""
    gaps = []
    expected = 1
    for seq in known:
        if seq > expected:
            gaps.append((expected, seq - 1))
        expected = seq + 1
    if last_seq >= expected:
        gaps.append((expected, last_seq))
    return gaps
