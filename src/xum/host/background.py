"""A workspace host's view of its session's background processes: wake-ups and the list.

A process started with `bash` `monitor` reports wake-ups (matching lines, its end) to its
session's registry; the host hears them through the `BackgroundHooks` it sets on the session
(`Watch.hooks`). Each wake-up is shown to the front-ends at once (`background-wake`) and waits
here until the host's drive delivers it: the notices that piled up become one turn, opened by
a synthetic message (kind `background_wake`) that says what happened. An idle host starts that
turn now; a busy one runs it after the running turn and what the user queued, before a goal's
continuation. An interrupted turn is not followed by one: the notices wait for the next turn
that ends normally, or the next wake-up.

The list (`snapshot`: what runs, since when, its last lines) is what a front-end's background
processes strip shows; a `background-processes` event carries it whenever a process starts or
ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xum.engine import events as E

if TYPE_CHECKING:
    from xum.tools.background import BackgroundHooks, BackgroundProcess, BackgroundProcesses
    from xum.tools.bgmonitor import BackgroundWake

WAKE_KIND = "background_wake"  # the synthetic message's kind
LAST_LINES = 5
# Notices waiting for a turn, at most; older ones are dropped (the model can list processes).
MAX_PENDING = 32


class Watch:
    """The wake-ups one host holds until its drive delivers them."""

    def __init__(self, emit: Callable[[E.Event], None], poke: Callable[[], None]) -> None:
        """`emit`: a host event to the front-ends; `poke`: ask for a drive (the host decides
        whether one runs already)."""
        self._emit = emit
        self._poke = poke
        self.pending: list[BackgroundWake] = []
        self.dropped = 0
        self.procs: BackgroundProcesses | None = None

    def hooks(self) -> BackgroundHooks:
        from xum.tools.background import BackgroundHooks

        return BackgroundHooks(on_wake=self._woken, on_list=self._listed, on_attach=self.attach)

    def _woken(self, wake: BackgroundWake) -> None:
        self._emit(
            E.BackgroundWake(
                task_id=wake.task_id,
                process_id=wake.process_id,
                display_name=wake.display_name,
                reason=wake.reason,
                status=wake.status,
                lines=list(wake.lines),
                exit_code=wake.exit_code,
                retired=wake.retired or None,
            )
        )
        self.pending.append(wake)
        if len(self.pending) > MAX_PENDING:
            del self.pending[0]
            self.dropped += 1
        self._poke()

    def _listed(self) -> None:
        self._emit(E.BackgroundProcesses(processes=self.snapshot(last_lines=0)))

    def take(self) -> str | None:
        """The message of a turn delivering every waiting notice; None when none waits."""
        if not self.pending:
            return None
        wakes, self.pending = self.pending, []
        dropped, self.dropped = self.dropped, 0
        parts = [w.message() for w in wakes]
        if dropped:
            parts.insert(0, f"[{dropped} earlier background notice(s) were dropped]")
        return "\n\n".join(parts)

    def attach(self, procs: BackgroundProcesses) -> None:
        self.procs = procs

    def running(self) -> bool:
        """A process still runs (closing the session would kill it)."""
        return self.procs is not None and bool(self.procs.active_ids())

    async def stop(self, process_id: str) -> dict[str, Any] | None:
        """Stop one process (an explicit stop: its monitor wakes nobody); its row after, or
        None when the session has no such process."""
        procs = self.procs
        proc = procs.get(process_id) if procs is not None else None
        if procs is None or proc is None:
            return None
        await procs.stop(proc)
        return describe(proc, LAST_LINES)

    def snapshot(self, *, last_lines: int = LAST_LINES) -> list[dict[str, Any]]:
        """The session's processes, running ones and those kept after they ended."""
        procs = self.procs
        if procs is None:
            return []
        return [describe(p, last_lines) for p in procs.processes(include_finished=True)]


def describe(proc: BackgroundProcess, last_lines: int) -> dict[str, Any]:
    result = proc.result
    row: dict[str, Any] = {
        "task_id": proc.task_id,
        "process_id": proc.process_id,
        "display_name": proc.display_name,
        "script": proc.command if len(proc.command) <= 500 else proc.command[:500] + "...",
        "status": proc.status,
        "started_at": int(proc.started_at * 1000),
        "exit_code": result.exit_code if result is not None else None,
        "monitored": proc.monitor is not None and not proc.monitor.retired,
        "total_bytes": proc.ring.total,
    }
    if last_lines:
        row["last_lines"] = proc.last_lines(last_lines)
    return row
