"""Following a log incrementally: the shape every projection of `chat.jsonl` shares.

A follower remembers the last seq it consumed and, on each `follow(log)`, reads only the frames
the log published since, so its cost follows the new frames, not the history length. Another
log, or this one reloaded (its generation moved), makes it start over from `reset()`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any, Protocol

from xum.store.frames import Frame


class FrameSource(Protocol):
    """What a follower reads (a `SessionLog`)."""

    @property
    def generation(self) -> int: ...

    def frames_after(self, seq: int) -> list[Frame]: ...


class LogFollower:
    """Subclasses say what a frame does in `_apply` (never called for a damaged frame) and
    extend `reset` with their own state."""

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
        self.feed(log.frames_after(self.last_seq))

    def feed(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            if frame.seq is not None and frame.seq > self.last_seq:
                self.last_seq = frame.seq
            if not frame.damaged:
                self._apply(frame)

    def _apply(self, frame: Frame) -> None:
        raise NotImplementedError
