"""bash_output: the new output of one background process, optionally filtered by lines, with a
bounded wait.

It reads the same cursor as `task_await` (each read returns what arrived since the previous
one, of either tool). A read takes at most what the process's in-memory ring holds (about
1 MiB; the rest is in its spill file, which the result names), so memory stays bounded however
much the process printed. With `filter`, only complete lines are read: those it keeps are shown
and the others are consumed for good; an unfinished last line waits for its end.
"""

from __future__ import annotations

import re
import time
from typing import ClassVar

from pydantic import Field

from xum.tools.background import BackgroundProcess, BashRead
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import BASH_TASK_PREFIX, wait_any

MAX_TIMEOUT_S = 3600.0


class BashOutputInput(ToolInput):
    process_id: str = Field(
        description=(
            "The background process to read: its backgroundProcessId, or its taskId "
            "(`bash:<id>`), as bash returned them."
        )
    )
    filter: str | None = Field(
        default=None,
        description=(
            "Optional regex; only output lines it matches are returned (with filter_exclude, "
            "only lines it does not match). The other lines are discarded for good: a later "
            "read does not return them (the spill file still has them)."
        ),
    )
    filter_exclude: bool | None = Field(
        default=None,
        description=(
            "When true, lines matching filter are left out instead of kept. Left-out lines do "
            "not end the wait: it goes on until kept output arrives or the process ends, so a "
            "long timeout_secs with a filter of progress noise waits for what matters. Needs "
            "filter."
        ),
    )
    timeout_secs: float | None = Field(
        default=None,
        ge=0,
        description=(
            "Seconds to wait for new output when none is there yet and the process still "
            f"runs (default 0: do not wait; at most {MAX_TIMEOUT_S:.0f}). Returns as soon as "
            "output arrives or the process ends. Use long waits only when nothing else can be "
            "done meanwhile."
        ),
    )


class BashOutputTool(Tool):
    name = "bash_output"
    description = (
        "Read the new output of a background bash process (started with run_in_background): "
        "what it printed since the previous read, its status, and its exit code once it ended. "
        "Optionally keep only lines matching a regex (or not matching it), and wait up to "
        "timeout_secs for output to arrive."
    )
    Input: ClassVar[type[ToolInput]] = BashOutputInput
    read_only = False  # it moves the read cursor, and must follow the start in its own step

    async def run(self, args: BashOutputInput, ctx: ToolContext) -> ToolResult:
        if ctx.background is None:
            return error("background commands are not available in this session")
        proc = find_process(ctx, args.process_id)
        if proc is None:
            return unknown_process(ctx, args.process_id)
        pattern: re.Pattern[str] | None = None
        if args.filter_exclude and not args.filter:
            return error("filter_exclude needs filter: give the regex of the lines to leave out")
        if args.filter:
            try:
                pattern = re.compile(args.filter)
            except re.error as exc:
                return error(f"filter is not a valid regular expression: {exc}")
        exclude = bool(args.filter_exclude)
        timeout = min(args.timeout_secs or 0.0, MAX_TIMEOUT_S)
        deadline = time.monotonic() + timeout
        consumed = 0
        missed = 0
        signal = ctx.background.signal
        while True:
            read = proc.take_lines(pattern, exclude=exclude)
            consumed += read.new_bytes
            missed += read.missed_bytes
            shows = read.lines_kept if pattern is not None else read.new_bytes
            remaining = deadline - time.monotonic()
            if shows or proc.done or remaining <= 0:
                break
            # Check, then wait with no await in between: a change cannot slip past.
            await wait_any([signal.future()], remaining)
        return ToolResult(
            output=render(read, pattern, exclude, consumed, missed, timeout),
            meta={
                "task_id": read.task_id,
                "process_id": proc.process_id,
                "display_name": read.display_name,
                "status": read.status,
                "exit_code": read.exit_code,
                "signal": read.signal,
                "new_bytes": consumed,
                "missed_bytes": missed,
                "total_bytes": read.total_bytes,
                "lines_kept": read.lines_kept,
                "elapsed_s": read.elapsed_s,
                "spill_path": read.spill_path,
            },
        )


def find_process(ctx: ToolContext, process_id: str) -> BackgroundProcess | None:
    if ctx.background is None:
        return None
    wanted = process_id.strip()
    return ctx.background.get(wanted.removeprefix(BASH_TASK_PREFIX))


def unknown_process(ctx: ToolContext, process_id: str) -> ToolResult:
    known = [p.process_id for p in ctx.background.processes()] if ctx.background else []
    listed = ", ".join(known) if known else "none"
    return error(
        f"no background process {process_id.strip()!r} in this workspace (running: {listed}). "
        "Use the backgroundProcessId bash returned."
    )


def render(
    read: BashRead,
    pattern: re.Pattern[str] | None,
    exclude: bool,
    consumed: int,
    missed: int,
    timeout: float,
) -> str:
    attrs = f'id="{read.task_id}" name="{_attr(read.display_name)}" status="{read.status}"'
    if read.exit_code is not None:
        attrs += f' exit_code="{read.exit_code}"'
    if read.signal is not None:
        attrs += f' signal="{read.signal}"'
    if pattern is None:
        body = read.output if consumed else "(no new output)"
    elif read.lines_kept:
        body = read.output
    else:
        body = "(no new lines " + ("left by" if exclude else "matching") + " the filter)"
    notes: list[str] = []
    if pattern is not None and consumed:
        verb = "left out" if exclude else "kept"
        notes.append(
            f"[filter /{pattern.pattern}/ {verb}: {read.lines_kept or 0} line(s) shown of "
            f"{consumed:,} new bytes]"
        )
    if missed and read.missed_bytes == 0:
        notes.append(f"[{missed:,} bytes were no longer in memory during the wait]")
    if not consumed and read.status == "running" and timeout > 0:
        notes.append(f"[no new output within {timeout:g} s; it is still running]")
    tail = ("\n" + "\n".join(notes)) if notes else ""
    return f"<bash {attrs}>\n{body.rstrip()}\n</bash>{tail}"


def _attr(value: str) -> str:
    import html

    return html.escape(value, quote=True)
