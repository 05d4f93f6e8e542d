"""How `xum run` shows engine events: streamed text on a terminal, NDJSON, or quiet.

The answer goes to stdout; tool lines and the closing status line go to stderr, so
`xum run "..." > answer.md` captures just the answer.

Live tool output (`tool-output` events) is shown by the text renderer only when stderr is a
terminal: a running command's output and its hooks' output, dimmed on stderr, with terminal
control sequences removed (the output is the repository's, not ours to let steer the terminal).
Background commands' streams are not shown: they would interleave with the streamed answer
(`task_await` and `--json` have them). Logs (stderr not a terminal) keep one line per tool.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson

from xum.engine import events as E
from xum.engine.display import key_argument, outcome, strip_controls
from xum.engine.events import Event

BACKGROUND_STREAM_PREFIX = "bash:"


def usage_line(reason: str, event: dict[str, Any], elapsed_s: float) -> str:
    usage = event.get("usage") or {}
    inp = int(usage.get("input_tokens", 0))
    cached = int(usage.get("cache_read_tokens", 0))
    ratio = f"{cached / inp:.0%} cached" if inp else "0% cached"
    cost = event.get("cost_usd")
    cost_text = "cost unknown" if cost is None else f"${cost:.4f}"
    steps = event.get("steps", 0)
    return (
        f"{reason} · {steps} step{'s' if steps != 1 else ''} · {inp:,} tokens in ({ratio}) · "
        f"{int(usage.get('output_tokens', 0)):,} out · {cost_text} · {elapsed_s:.1f}s"
    )


class TextRenderer:
    """Human-readable streaming for a terminal (or any stream: colours only on a TTY)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = self.err.isatty()
        self._at_line_start = True
        self._calls: dict[str, tuple[str, Any]] = {}
        self._thinking_shown = False
        self._err_at_line_start = True  # after live output: does stderr end with a newline?

    def _dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.color else text

    def _newline(self) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True

    def __call__(self, event: Event) -> None:
        if isinstance(event, E.TextDelta):
            text = event.text
            self.out.write(text)
            self.out.flush()
            if text:
                self._at_line_start = text.endswith("\n")
            self._err_at_line_start = True
        elif isinstance(event, E.ReasoningDelta) and not self._thinking_shown:
            self._newline()
            self.err.write(self._dim("(thinking)") + "\n")
            self._thinking_shown = True
        elif isinstance(event, E.StepStart):
            self._thinking_shown = False
        elif isinstance(event, E.ToolCall):
            self._calls[event.call_id] = (event.name, event.arguments)
        elif isinstance(event, E.ToolOutput):
            self._live_output(event)
        elif isinstance(event, E.ToolResult):
            self._newline()
            self._end_live_line()
            name, arguments = self._calls.pop(event.call_id, (event.name, None))
            mark = "✗" if event.is_error else "✓"
            detail = key_argument(name, arguments)
            line = f"{mark} {name} {detail} → {outcome(name, event.is_error, event.meta)}"
            self.err.write(self._dim(line) + "\n")
        elif isinstance(event, E.DiscardPartial):
            self._newline()
            self.err.write(self._dim("(connection lost; the reply restarts)") + "\n")
        elif isinstance(event, E.ModelFallback):
            self._newline()
            self.err.write(self._dim(f"note: {event.message}") + "\n")
        elif isinstance(event, E.Retrying):
            self._newline()
            self.err.write(self._dim(f"(retrying in {event.delay_s:.1f}s: {event.reason})") + "\n")
        elif isinstance(event, E.Advisory | E.ReplyStalled):
            self._newline()
            self.err.write(self._dim(f"note: {event.message}") + "\n")
        elif isinstance(event, E.GovernorWait) and event.reason != "concurrency":
            # A held turn, a provider's pause, a queued sub-agent (docs/governor.md); a wait
            # for a free request slot is short and frequent, not worth a line.
            self._newline()
            self.err.write(self._dim(f"waiting: {event.message}") + "\n")
        elif isinstance(event, E.InitOutput):
            self.err.write(self._dim(f"init: {event.line}") + "\n")
        elif isinstance(event, E.ErrorEvent):
            self._newline()
            self.err.write(f"error: {event.message}\n")
            if event.hint:
                self.err.write(f"  hint: {event.hint}\n")

    def _live_output(self, event: E.ToolOutput) -> None:
        if not self.color or event.stream.startswith(BACKGROUND_STREAM_PREFIX):
            return
        text = strip_controls(event.text)
        if not text:
            return
        self._newline()
        self.err.write(self._dim(text))
        self.err.flush()
        self._err_at_line_start = text.endswith("\n")

    def _end_live_line(self) -> None:
        if not self._err_at_line_start:
            self.err.write("\n")
            self._err_at_line_start = True

    def finish(self, line: str) -> None:
        self._newline()
        self._end_live_line()
        self.err.write(self._dim(line) + "\n")
        self.err.flush()


class JsonRenderer:
    """NDJSON: one event per line on stdout, flushed as it happens.

    The run's one terminal event (`final` or `error`) is written with `terminal`. An engine
    `error` event (a turn that ended on a provider error) is not written on its own line: the
    `turn-end` and the `final` event carry the same error object, so a reader sees exactly one
    event of type `final` or `error`, and it is the last line."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        if isinstance(event, E.ErrorEvent):
            return
        self._write(event.to_dict())

    def terminal(self, event: dict[str, Any]) -> None:
        self._write(event)

    def _write(self, event: dict[str, Any]) -> None:
        self.out.write(orjson.dumps(event, default=str).decode() + "\n")
        self.out.flush()

    def finish(self, line: str) -> None:
        pass


class QuietRenderer:
    """Nothing while running but errors (on stderr); the caller prints the final answer."""

    def __init__(self, err: TextIO | None = None) -> None:
        self.err = err or sys.stderr

    def __call__(self, event: Event) -> None:
        if isinstance(event, E.ErrorEvent):
            self.err.write(f"error: {event.message}\n")
            if event.hint:
                self.err.write(f"  hint: {event.hint}\n")

    def finish(self, line: str) -> None:
        pass


# What `xum run` renders with; each is an `EventSink` with `finish(line)`.
Renderer = TextRenderer | JsonRenderer | QuietRenderer
