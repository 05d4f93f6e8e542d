"""What a running turn has shown so far that the log does not hold: the calls running now and
their live output.

A (re)connecting subscriber gets, in order, the committed events after its last sequence (from
the log), the partial message (the hub's snapshot), then what this module kept: a `tool-call`
event for each call still running and one `tool-output` event per stream with the text printed
so far, then the governor's wait in progress (`governor-wait`), then live deltas. Without it, a browser reloaded while a command runs would show only
what the command printed after the reload.

The engine already bounds each stream (`xum.tools.live`: 256 Ki characters, then one marker);
the bounds here are a second line of defence against a source that does not, so a stream kept
here never grows past `MAX_KEPT_CHARS` (its head is kept: the live view stops there too) and at
most `MAX_CALLS` calls are kept (the oldest go first). Foreground output goes when its call's
result is committed or the turn ends; a background command's stream (`bash:<id>`) outlives its
call, as the UIs show it, until the call count pushes it out.

Everything here runs on the loop that emits the events; folding is a few dict operations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xum.engine import events as E
from xum.tools.live import LIVE_CUT_MARKER, MAX_LIVE_CHARS

MAX_KEPT_CHARS = MAX_LIVE_CHARS + len(LIVE_CUT_MARKER) + 64
MAX_CALLS = 32


def is_background_stream(stream: str) -> bool:
    """Streams of background commands outlive the call's result (`bash:<task id>`)."""
    return stream.startswith("bash:")


@dataclass
class _Call:
    """A tool call still running, and the live output it has streamed so far."""

    started: E.ToolCall | None = None  # None once the call's result is committed
    streams: dict[str, list[str]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


class InFlight:
    """Folds a workspace's events; `snapshot()` is what a new subscriber must be sent."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}  # by call id, in the order last written
        self._waiting: E.GovernorWait | None = None  # what the governor holds back now

    def fold(self, event: E.Event) -> None:
        if isinstance(event, E.ToolCall):
            self._call(event.call_id).started = event
        elif isinstance(event, E.ToolOutput):
            self._output(event)
        elif isinstance(event, E.ToolResult):
            self._end(event.call_id)
        elif isinstance(event, E.GovernorWait):
            self._waiting = event
        elif isinstance(event, E.GovernorWaitEnd):
            self._waiting = None
        elif isinstance(event, E.TurnEnd):
            self._waiting = None
            for call_id in list(self._calls):
                self._end(call_id)

    def snapshot(self) -> list[E.Event]:
        """`tool-call` events of the running calls, then the output so far of every stream."""
        out: list[E.Event] = []
        for call in self._calls.values():
            if call.started is not None:
                out.append(call.started)
        for call_id, call in self._calls.items():
            for stream, parts in call.streams.items():
                text = "".join(parts)
                if len(parts) > 1:
                    parts[:] = [text]  # joined once; the next snapshot reuses it
                if text:
                    out.append(E.ToolOutput(call_id=call_id, stream=stream, text=text))
        if self._waiting is not None:
            out.append(self._waiting)
        return out

    def clear(self) -> None:
        self._calls.clear()
        self._waiting = None

    def _call(self, call_id: str) -> _Call:
        call = self._calls.pop(call_id, None) or _Call()
        self._calls[call_id] = call  # last written goes last
        while len(self._calls) > MAX_CALLS:
            del self._calls[next(iter(self._calls))]
        return call

    def _output(self, event: E.ToolOutput) -> None:
        if not event.text:
            return
        call = self._call(event.call_id)
        size = call.sizes.get(event.stream, 0)
        room = MAX_KEPT_CHARS - size
        if room <= 0:
            return
        text = event.text[:room]
        call.streams.setdefault(event.stream, []).append(text)
        call.sizes[event.stream] = size + len(text)

    def _end(self, call_id: str) -> None:
        call = self._calls.get(call_id)
        if call is None:
            return
        call.started = None
        for stream in [s for s in call.streams if not is_background_stream(s)]:
            del call.streams[stream]
            call.sizes.pop(stream, None)
        if not call.streams:
            del self._calls[call_id]
