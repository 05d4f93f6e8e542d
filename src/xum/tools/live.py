"""Live tool output: what a UI shows of a command while it runs.

Tools write raw bytes to named streams (`ToolContext.open_output`); a session's `LiveOutputs`
turns them into `emit(call_id, stream, text)` calls, which the engine makes `tool-output`
events. Per stream it:

* decodes UTF-8 incrementally: a character cut between two reads is completed by the next one,
  invalid bytes become U+FFFD (what the tool result shows too), and a character still
  incomplete when the stream closes is replaced as well;
* bounds the text: at most `max_chars` characters (MAX_LIVE_CHARS, 256 Ki, by default) are
  sent, then one marker (LIVE_CUT_MARKER) and nothing more. The tool's result, its spill file
  and `task_await` keep the whole output; the live view is for watching, not the record;
* coalesces: text gathered between flushes goes out as one emit. One loop timer per session
  flushes every stream with pending text `interval_s` (50 ms) after the first write that found
  nothing pending, so a chatty command costs at most ~20 events a second per stream, not one per
  read. A stream that gathers MAX_EVENT_CHARS is flushed at once (events stay small), and
  `close` flushes its stream immediately, so everything a foreground command printed is emitted
  before the call's result.

Secret masking is not done here: it works on bytes and wraps the opener above this layer
(`xum.workspaces.safety.masking`), so every stream a tool or hook opens is masked before it reaches
this module. Live output is best-effort: a failing `emit` is logged and never fails the tool.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xum.tools.base import OutputOpener, OutputStream

INTERVAL_S = 0.05
MAX_LIVE_CHARS = 256 * 1024
# One emit carries at most this much: a burst is sent in pieces rather than one huge event.
MAX_EVENT_CHARS = 64 * 1024
LIVE_CUT_MARKER = (
    "\n[... live output stops here after {limit:,} characters; the rest is in the tool result "
    "(task_await, for a background command) and its full-output file ...]\n"
)

# emit(call_id, stream, text)
LiveEmit = Callable[[str, str, str], None]

_log = logging.getLogger(__name__)


class LiveStream:
    """One named stream of one call (an `OutputStream`). Made by `LiveOutputs.opener`."""

    __slots__ = (
        "_decoder",
        "_owner",
        "_pending",
        "_sent",
        "call_id",
        "closed",
        "cut",
        "name",
        "pending_chars",
    )

    def __init__(self, owner: LiveOutputs, call_id: str, name: str) -> None:
        self._owner = owner
        self.call_id = call_id
        self.name = name
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []
        self.pending_chars = 0
        self._sent = 0  # characters accepted so far (emitted or pending), the marker excluded
        self.cut = False  # the cap was reached: the marker is out, the rest is dropped
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed or self.cut or not data:
            return
        self._accept(self._decoder.decode(data))

    def close(self) -> None:
        if self.closed:
            return
        if not self.cut:
            self._accept(self._decoder.decode(b"", final=True))
        self.closed = True
        self._owner._flush_stream(self)
        self._owner._forget(self)

    def _accept(self, text: str) -> None:
        if not text:
            return
        room = self._owner.max_chars - self._sent
        if len(text) > room:
            self._sent += room
            text = text[:room] + LIVE_CUT_MARKER.format(limit=self._owner.max_chars)
            self.cut = True
        else:
            self._sent += len(text)
        self._pending.append(text)
        self.pending_chars += len(text)
        self._owner._pending_added(self)

    def take(self) -> str:
        text = "".join(self._pending)
        self._pending.clear()
        self.pending_chars = 0
        return text


class LiveOutputs:
    """The live output streams of one session (every call, foreground and background).

    `opener(call_id)` goes into each call's ToolContext as `open_output`; `close()` flushes and
    ends every stream still open (the session is closing). Runs on the event loop's thread (the
    runtimes feed output from the loop); without a running loop every write flushes at once.
    """

    def __init__(
        self,
        emit: LiveEmit,
        *,
        interval_s: float = INTERVAL_S,
        max_chars: int = MAX_LIVE_CHARS,
        max_event_chars: int = MAX_EVENT_CHARS,
    ) -> None:
        self.emit = emit
        self.interval_s = interval_s
        self.max_chars = max_chars
        self.max_event_chars = max_event_chars
        self._open: dict[int, LiveStream] = {}  # by id(): every stream not closed yet
        self._dirty: dict[int, LiveStream] = {}  # streams with pending text, in arrival order
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def opener(self, call_id: str) -> OutputOpener:
        def open_output(name: str) -> OutputStream:
            return self.open(call_id, name)

        return open_output

    def open(self, call_id: str, name: str) -> LiveStream:
        stream = LiveStream(self, call_id, name)
        if self._closed:
            stream.closed = True  # the session is gone: a stream that says nothing
        else:
            self._open[id(stream)] = stream
        return stream

    @property
    def open_streams(self) -> int:
        return len(self._open)

    def flush(self) -> None:
        """Emit what every stream gathered (the timer does this; tests and close call it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        dirty, self._dirty = self._dirty, {}
        for stream in dirty.values():
            self._send(stream)

    def close(self) -> None:
        """Close every open stream (flushing it) and stop; later streams are silent."""
        for stream in list(self._open.values()):
            stream.close()
        self.flush()
        self._closed = True

    # Called by LiveStream --------------------------------------------------------------------

    def _pending_added(self, stream: LiveStream) -> None:
        if stream.closed:
            return  # close() flushes it right after
        if stream.pending_chars >= self.max_event_chars:
            self._dirty.pop(id(stream), None)
            self._send(stream)
            return
        self._dirty[id(stream)] = stream
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): nothing to coalesce with
                self.flush()
                return
            self._timer = loop.call_later(self.interval_s, self._on_timer)

    def _flush_stream(self, stream: LiveStream) -> None:
        self._dirty.pop(id(stream), None)
        self._send(stream)

    def _forget(self, stream: LiveStream) -> None:
        self._open.pop(id(stream), None)

    # Internals -------------------------------------------------------------------------------

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def _send(self, stream: LiveStream) -> None:
        text = stream.take()
        if not text:
            return
        try:
            self.emit(stream.call_id, stream.name, text)
        except Exception:  # a broken UI sink must not break the command it watches
            _log.exception(
                "live output of %s (%s) could not be emitted", stream.call_id, stream.name
            )
