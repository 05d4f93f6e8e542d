"""Following a log incrementally: the shape every projection of `chat.jsonl` shares.

A follower remembers the last seq it consumed and, on each `follow(log)`, reads only the frames
the log published since, so its cost follows the new frames, not the history length. Another
log, or this one reloaded (its generation moved), makes it start over from `reset()`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from xum.store import frame_types as ev
from xum.store.frames import Frame


class FrameSource(Protocol):
    """What a follower reads (a `SessionLog`)."""

    @property
    def generation(self) -> int: ...

    def frames_after(self, seq: int) -> list[Frame]: ...


class LogFollower:
    """Subclasses say what a frame does in `_apply` (never called for a damaged frame) and
    extend `reset` with their own state.

    A follower whose state starts over at every boundary sets `from_boundary`: starting on a
    log, it then skips to the log's last boundary, so opening a long session does not read
    (nor, for a `LazyFrame`, decode) the history no request will carry."""

    from_boundary = False

    def __init__(self) -> None:
        self._source: weakref.ref[Any] | None = None
        self._generation = -1
        self.reset()

    def reset(self) -> None:
        """Forget everything consumed; the next `feed` starts from the beginning of a log."""
        self.last_seq = 0

    def follow(self, log: FrameSource) -> None:
        """Consume what `log` published since the last call."""
        if self._source is None or self._source() is not log or self._generation != log.generation:
            self.reset()  # another log, or this one was reloaded: start over
            self._source = weakref.ref(log)
            self._generation = log.generation
        frames = log.frames_after(self.last_seq)
        if self.from_boundary and self.last_seq == 0:
            frames = frames[last_boundary(frames) :]
        self.feed(frames)

    def feed(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            if frame.seq is not None and frame.seq > self.last_seq:
                self.last_seq = frame.seq
            if not frame.damaged:
                self._apply(frame)

    def _apply(self, frame: Frame) -> None:
        raise NotImplementedError


def last_boundary(frames: Sequence[Frame]) -> int:
    """The index of the last frame after which nothing earlier counts for the provider: a
    `context_reset`, or a `compaction` with a summary (one without is no boundary); 0 if none.
    Reads frame types only, and the data of the compaction it stops at."""
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        if frame.damaged or frame.type not in ev.BOUNDARY_TYPES:
            continue
        if frame.type == ev.CONTEXT_RESET or isinstance(frame.data.get("summary"), str):
            return index
    return 0
