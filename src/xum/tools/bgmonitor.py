"""Watching a background process for its session: matching lines and its end, as wake-ups.

A `bash` call with `monitor` arms a `LineMonitor` on its background process. The monitor sees
the process's kept output (after masking, so a secret never reaches a wake-up's text), splits
it into complete lines and tests each against `monitor.filter` (or, with `filter_exclude`,
against its negation). The first matching line starts a cooldown (`cooldown_ms`, default 1 s);
every line that matches before it runs out joins the same wake-up, so a burst of failures
wakes the agent once. When the process settles (exit, kill by a signal, its lifetime running
out) the monitor wakes once more unless `wake_on_exit` is false; lines still cooling down go
with that wake-up. An explicit stop (`task_stop`, `bash_background_terminate`, the session
closing) produces no wake-up, and neither does anything after `max_events` matching lines:
the monitor retires (its last lines are delivered at once) and the process keeps running.

Memory stays bounded whatever the process prints: an unfinished line is kept up to
`MAX_LINE_BYTES` (the rest of a longer line is dropped), and a wake-up carries at most
`MAX_WAKE_LINES` lines of at most `MAX_SHOWN_LINE_CHARS` characters; it says how many more
matched.

Who is woken is not this module's business: the process hands each `BackgroundWake` to the
callback its session's registry was given (the workspace host starts a turn with it).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

MAX_LINE_BYTES = 8 * 1024
MAX_WAKE_LINES = 20
MAX_SHOWN_LINE_CHARS = 500
DEFAULT_COOLDOWN_MS = 1000

WakeReason = Literal["output", "exit"]


@dataclass(frozen=True, slots=True)
class MonitorSpec:
    """What a `bash` call's `monitor` asked for, checked."""

    pattern: re.Pattern[str] | None  # None: no line wakes; only the end does
    exclude: bool = False
    cooldown_s: float = DEFAULT_COOLDOWN_MS / 1000
    max_events: int | None = None
    wake_on_exit: bool = True

    def describe(self) -> str:
        """One phrase for the tool result: what will wake the session."""
        parts: list[str] = []
        if self.pattern is not None:
            verb = "not matching" if self.exclude else "matching"
            parts.append(f"each burst of lines {verb} /{self.pattern.pattern}/")
        if self.wake_on_exit:
            parts.append("the process's end")
        return " and ".join(parts) or "nothing"


@dataclass(frozen=True, slots=True)
class BackgroundWake:
    """One wake-up: what a watched background process did."""

    task_id: str
    process_id: str
    display_name: str
    reason: WakeReason  # "output": lines matched; "exit": the process settled
    lines: tuple[str, ...]  # the matching lines (bounded), oldest first
    more_lines: int  # matching lines beyond those kept
    status: str  # the process's status when the wake-up was made (BashStatus)
    exit_code: int | None
    signal: int | None
    retired: bool  # the monitor reached max_events and watches no more

    def message(self) -> str:
        """The text of the turn that delivers it (the model reads this)."""
        head = f"Background process {self.task_id} ({self.display_name})"
        if self.reason == "exit":
            head += f" has ended: {self.status}"
            if self.exit_code is not None:
                head += f", exit code {self.exit_code}"
            if self.signal is not None:
                head += f", signal {self.signal}"
            head += "."
        else:
            head += " printed lines its monitor watches for."
        out = [head]
        if self.lines:
            out.append("Matching lines:")
            out.extend(f"  {line}" for line in self.lines)
            if self.more_lines:
                out.append(f"  [... {self.more_lines} more matching line(s) not shown]")
        if self.retired:
            out.append("Its monitor reached max_events and no longer watches it.")
        out.append(
            f'Read its output with bash_output (process_id "{self.process_id}"); stop it with '
            "bash_background_terminate when it is no longer needed."
        )
        return "\n".join(out)


Deliver = Callable[[WakeReason, tuple[str, ...], int, bool], None]


class LineMonitor:
    """Matching lines of one process, coalesced over the cooldown, handed to `deliver`."""

    def __init__(self, spec: MonitorSpec, deliver: Deliver) -> None:
        self.spec = spec
        self._deliver = deliver
        self._partial = bytearray()
        self._partial_cut = False  # the unfinished line grew past MAX_LINE_BYTES
        self._lines: list[str] = []
        self._more = 0
        self._events = 0
        self._timer: asyncio.TimerHandle | None = None
        self.retired = False
        self.wakes = 0  # how many wake-ups it made (shown in listings)

    # Output ------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        if self.retired or self.spec.pattern is None:
            return
        start = 0
        while not self.retired:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._hold(chunk[start:])
                return
            self._hold(chunk[start:end])
            self._line_done()
            start = end + 1

    def _hold(self, piece: bytes) -> None:
        room = MAX_LINE_BYTES - len(self._partial)
        if len(piece) > room:
            self._partial_cut = True
            piece = piece[: max(room, 0)]
        self._partial += piece

    def _line_done(self) -> None:
        raw, self._partial = bytes(self._partial), bytearray()
        cut, self._partial_cut = self._partial_cut, False
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        pattern = self.spec.pattern
        assert pattern is not None
        if (pattern.search(line) is not None) == self.spec.exclude:
            return
        self._events += 1
        if len(self._lines) < MAX_WAKE_LINES:
            shown = line if len(line) <= MAX_SHOWN_LINE_CHARS else line[:MAX_SHOWN_LINE_CHARS]
            self._lines.append(shown + (" [...]" if cut or shown is not line else ""))
        else:
            self._more += 1
        if self.spec.max_events is not None and self._events >= self.spec.max_events:
            self._cancel_timer()
            self.retired = True
            self._flush("output", retired=True)
            return
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.spec.cooldown_s, self._cooled)

    def _cooled(self) -> None:
        self._timer = None
        if not self.retired:
            self._flush("output")

    # The end -----------------------------------------------------------------------------

    def settled(self) -> None:
        """The process ended on its own (exit, signal, lifetime): its last unfinished line
        counts as a line, and the end wakes unless `wake_on_exit` is false."""
        if self.retired:
            return
        if self._partial and self.spec.pattern is not None:
            self._line_done()
            if self.retired:
                return
        self._cancel_timer()
        self.retired = True
        if self.spec.wake_on_exit:
            self._flush("exit")
        elif self._lines or self._more:
            self._flush("output")

    def cancel(self) -> None:
        """An explicit stop: no wake-up, and lines still cooling down are dropped."""
        self._cancel_timer()
        self.retired = True
        self._lines, self._more = [], 0

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush(self, reason: WakeReason, *, retired: bool = False) -> None:
        lines, self._lines = tuple(self._lines), []
        more, self._more = self._more, 0
        self.wakes += 1
        self._deliver(reason, lines, more, retired)


def parse_monitor(
    filter_text: str | None,
    exclude: bool | None,
    cooldown_ms: float | None,
    max_events: int | None,
    wake_on_exit: bool | None,
) -> MonitorSpec:
    """The checked spec; ValueError (for the model) when the arguments cannot work."""
    if exclude and not filter_text:
        raise ValueError("monitor.filter_exclude needs monitor.filter")
    pattern: re.Pattern[str] | None = None
    if filter_text:
        try:
            pattern = re.compile(filter_text)
        except re.error as exc:
            raise ValueError(f"monitor.filter is not a valid regular expression: {exc}") from exc
    if cooldown_ms is not None and cooldown_ms < 0:
        raise ValueError("monitor.cooldown_ms must be 0 or more")
    if max_events is not None and max_events < 1:
        raise ValueError("monitor.max_events must be 1 or more")
    on_exit = True if wake_on_exit is None else wake_on_exit
    if pattern is None and not on_exit:
        raise ValueError(
            "this monitor would never wake: give monitor.filter, or leave wake_on_exit true"
        )
    return MonitorSpec(
        pattern=pattern,
        exclude=bool(exclude),
        cooldown_s=(DEFAULT_COOLDOWN_MS if cooldown_ms is None else cooldown_ms) / 1000,
        max_events=max_events,
        wake_on_exit=on_exit,
    )
