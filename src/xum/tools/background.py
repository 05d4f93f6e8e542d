"""Background bash processes of one session: start, read new output, stop, close.

A background process is an ordinary `runtime.exec` running as an asyncio task, so it gets the
same process-group handling as a foreground command (and works on any runtime): its lifetime
limit is the exec timeout, and cancelling the task kills the whole group. Output goes to a
bounded in-memory ring (what `task_await` returns: the bytes since the last read) and, in full
up to the spill cap, to a file under `$XUM_SCRATCH_DIR/tool-output/`. A reader that falls more
than the ring behind is told how many bytes it missed and where the file is. When the process
ends (or is stopped) the file is handed to the runtime (`Runtime.publish_file`): on an SSH
workspace it is copied to the host, where the model's tools can read it; until then the marker
says it is on xum's machine.

The output also goes to a live stream opened from the starting call's context, named by the
taskId (`bash:<id>`): it outlives the call that returned the taskId and is closed (flushing what
masking held back) only when the process ends.

The session owns its `BackgroundProcesses` and closes it when it closes: no process outlives
the session that started it.

A process started with a monitor (`xum.tools.bgmonitor`) hands its wake-ups (matching lines,
its end) to the registry's `on_wake`, which the workspace host sets; a registry without one
cannot wake its session (`can_wake`), and `bash` says so instead of arming a monitor. `on_list`
is told when a process starts or ends (front-ends' lists of background processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from xum.core.ids import random_suffix
from xum.core.paths import FILE_MODE, ensure_private_dir
from xum.runtime.base import ExecResult, Runtime
from xum.tools.bgmonitor import BackgroundWake, LineMonitor, MonitorSpec, WakeReason
from xum.tools.bounds import SpillPlace, clip_middle, spill_dir
from xum.tools.tasking import BASH_TASK_PREFIX, ChangeSignal

if TYPE_CHECKING:
    import re

    from xum.tools.base import OutputFilter, OutputOpener, OutputStream

RING_BYTES = 1024 * 1024
# A read shows at most this much of the new output (head and tail), like a foreground command.
SHOW_HEAD_BYTES = 16 * 1024
SHOW_TAIL_BYTES = 16 * 1024
# At most this many processes run at once per session; more is almost always a mistake.
MAX_RUNNING = 16
# Finished processes kept for task_list / task_await; the oldest are forgotten first.
MAX_KEPT_FINISHED = 64

BashStatus = Literal["running", "exited", "killed", "timed_out", "stopped", "failed"]


class OutputRing:
    """The last `capacity` bytes of a stream, addressed by absolute offsets.

    Trimming is amortized (the buffer may grow to 1.25x before the front is dropped), so a
    chatty process costs one memmove per quarter megabyte rather than one per chunk.
    """

    __slots__ = ("_buf", "_start", "capacity")

    def __init__(self, capacity: int = RING_BYTES) -> None:
        self.capacity = capacity
        self._buf = bytearray()
        self._start = 0  # absolute offset of _buf[0]

    @property
    def total(self) -> int:
        return self._start + len(self._buf)

    @property
    def held(self) -> int:
        return len(self._buf)

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        if len(self._buf) > self.capacity + self.capacity // 4:
            drop = len(self._buf) - self.capacity
            del self._buf[:drop]
            self._start += drop

    def read(self, offset: int) -> tuple[int, bytes]:
        """(bytes lost before what is still held, the bytes from `offset` to the end)."""
        missed = max(0, self._start - offset)
        begin = max(offset, self._start) - self._start
        return missed, bytes(self._buf[begin:])


@dataclass(slots=True)
class BashRead:
    """What one read of a background process returns."""

    task_id: str
    display_name: str
    status: BashStatus
    output: str  # the new output since the previous read, bounded
    new_bytes: int
    missed_bytes: int  # new bytes no longer held in memory (they are in the spill file)
    total_bytes: int
    exit_code: int | None
    signal: int | None
    elapsed_s: float
    spill_path: str | None
    lines_kept: int | None = None  # a filtered read: how many lines it shows


class BackgroundProcess:
    def __init__(
        self,
        process_id: str,
        *,
        script: str,
        display_name: str,
        timeout_s: float,
        spill_path: Path,
        spill_cap: int,
        spill_visible: bool,
        ring_bytes: int,
        on_change: Callable[[], None],
    ) -> None:
        """`spill_visible`: the runtime's tools read the spill file where it is written
        (`Runtime.sees_local_files`); otherwise only once it is published when the process
        ends."""
        self.process_id = process_id
        self.task_id = BASH_TASK_PREFIX + process_id
        self.script = script
        self.command = script  # as lists show it (the model's script)
        self.display_name = display_name
        self.timeout_s = timeout_s
        self.spill_path = spill_path
        self.spill_cap = spill_cap
        self.spill = SpillPlace(spill_path, visible=spill_visible)
        self.started = time.monotonic()
        self.started_at = time.time()  # wall clock, for lists ("since when")
        self.ended: float | None = None
        self.ring = OutputRing(ring_bytes)
        self.cursor = 0  # absolute offset of the first byte not yet read
        self.result: ExecResult | None = None
        self.failure: str | None = None
        self.stopped = False
        self._on_change = on_change
        self._spill_fd: int | None = None
        self._spilled = 0
        self._spill_failed = False
        self.task: asyncio.Task[None] | None = None
        self.live: OutputStream | None = None  # the live view, closed when the process ends
        # The output filter (masking) the ring and the spill file are fed through, if any.
        self.kept: OutputStream | None = None
        self.monitor: LineMonitor | None = None  # armed by a `monitor` argument
        self.on_wake: Callable[[BackgroundWake], None] | None = None

    # Output --------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        if self.live is not None:
            self.live.write(chunk)
        if self.kept is not None:
            self.kept.write(chunk)  # masked on its way to _keep
        else:
            self._keep(chunk)

    def _keep(self, chunk: bytes) -> None:
        self.ring.feed(chunk)
        self._spill(chunk)
        if self.monitor is not None:
            self.monitor.feed(chunk)
        self._on_change()

    def arm(self, spec: MonitorSpec, on_wake: Callable[[BackgroundWake], None]) -> None:
        """Watch this process for `spec`'s lines and its end; wake-ups go to `on_wake`."""
        self.on_wake = on_wake
        self.monitor = LineMonitor(spec, self._wake)

    def _wake(self, reason: WakeReason, lines: tuple[str, ...], more: int, retired: bool) -> None:
        if self.on_wake is None:
            return
        result = self.result
        self.on_wake(
            BackgroundWake(
                task_id=self.task_id,
                process_id=self.process_id,
                display_name=self.display_name,
                reason=reason,
                lines=lines,
                more_lines=more,
                status=self.status,
                exit_code=result.exit_code if result is not None else None,
                signal=result.signal if result is not None else None,
                retired=retired,
            )
        )

    def _spill(self, chunk: bytes) -> None:
        if self._spill_failed or self._spilled >= self.spill_cap:
            return
        try:
            if self._spill_fd is None:
                ensure_private_dir(self.spill_path.parent)
                self._spill_fd = os.open(
                    self.spill_path,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                    FILE_MODE,
                )
            view = memoryview(chunk)[: self.spill_cap - self._spilled]
            while view:
                written = os.write(self._spill_fd, view)
                self._spilled += written
                view = view[written:]
        except OSError:  # disk full: the ring still holds the recent output
            self._spill_failed = True
            self._close_spill()

    def _close_spill(self) -> None:
        if self._spill_fd is not None:
            fd, self._spill_fd = self._spill_fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    # State ---------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.ended is not None

    @property
    def status(self) -> BashStatus:
        if self.ended is None:
            return "running"
        if self.stopped:
            return "stopped"
        if self.failure is not None or self.result is None:
            return "failed"
        if self.result.timed_out:
            return "timed_out"
        if self.result.signal is not None:
            return "killed"
        return "exited"

    @property
    def unread(self) -> bool:
        return self.cursor < self.ring.total

    def finish(self, result: ExecResult | None, failure: str | None) -> None:
        if self.kept is not None:  # what the filter held back, before the spill is closed
            kept, self.kept = self.kept, None
            kept.close()
        self.result = result
        self.failure = failure
        self.ended = time.monotonic()
        self._close_spill()
        if self.live is not None:
            live, self.live = self.live, None
            live.close()
        if self.monitor is not None:
            # An explicit stop (task_stop, terminate, the session closing) wakes nobody.
            if self.stopped:
                self.monitor.cancel()
            else:
                self.monitor.settled()
        self._on_change()

    async def publish_spill(self, runtime: Runtime) -> None:
        """Once the process ended, hand its spill file to the runtime (see `SpillPlace`; on SSH
        it is copied to the host)."""
        self._close_spill()
        if self._spilled:
            await self.spill.publish(runtime)

    def _where(self) -> tuple[str | None, str]:
        """The spill file's path (for meta) and how the marker names it."""
        if not self._spilled:
            return None, "not kept"
        pending = "it was not copied there" if self.done else "it is copied there when it ends"
        return self.spill.path, self.spill.where(pending=pending)

    def take(self) -> BashRead:
        """The output since the previous read (the cursor moves to the end)."""
        return self.take_lines(None)

    def take_lines(self, pattern: re.Pattern[str] | None, *, exclude: bool = False) -> BashRead:
        """The output since the previous read. With `pattern`, only its complete lines that
        match (`exclude`: that do not match) are shown and the others are consumed; an
        unfinished last line stays unread until it ends (or the process does)."""
        missed, data = self.ring.read(self.cursor)
        lines_kept: int | None = None
        cut = len(data)
        if pattern is None:
            self.cursor = self.ring.total
            shown = data
        else:
            if not self.done:
                newline = data.rfind(b"\n")
                # A line longer than the ring can never be finished in memory: take it as is.
                if newline >= 0 or len(data) < self.ring.capacity:
                    cut = newline + 1
            self.cursor = self.ring.total - (len(data) - cut)
            shown, lines_kept = _filter_lines(data[:cut], pattern, exclude)
        spill, where = self._where()
        text = clip_middle(
            shown, head_bytes=SHOW_HEAD_BYTES, tail_bytes=SHOW_TAIL_BYTES, where=where
        )
        if missed:
            text = f"[... {missed:,} earlier bytes no longer in memory; {where} ...]\n{text}"
        result = self.result
        return BashRead(
            task_id=self.task_id,
            display_name=self.display_name,
            status=self.status,
            output=text,
            new_bytes=missed + cut,
            missed_bytes=missed,
            total_bytes=self.ring.total,
            exit_code=result.exit_code if result else None,
            signal=result.signal if result else None,
            elapsed_s=round((self.ended or time.monotonic()) - self.started, 3),
            spill_path=spill,
            lines_kept=lines_kept,
        )

    def last_lines(self, count: int, *, max_bytes: int = 8 * 1024) -> list[str]:
        """The last `count` lines of what it printed (from memory, at most `max_bytes`), for a
        list of processes; reading them moves no cursor."""
        _missed, data = self.ring.read(max(0, self.ring.total - max_bytes))
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        if len(data) == max_bytes and lines and self.ring.total > max_bytes:
            lines = lines[1:]  # the first one is probably cut
        return lines[-count:] if count > 0 else []


def _filter_lines(data: bytes, pattern: re.Pattern[str], exclude: bool) -> tuple[bytes, int]:
    """The lines of `data` that `pattern` keeps (`search`; `exclude`: that it does not match),
    and how many there are."""
    kept: list[str] = []
    for line in data.decode("utf-8", errors="replace").splitlines(keepends=True):
        if (pattern.search(line.rstrip("\r\n")) is not None) != exclude:
            kept.append(line)
    return "".join(kept).encode("utf-8"), len(kept)


@dataclass(frozen=True, slots=True)
class BackgroundHooks:
    """Who hears from a session's background processes: set on the session by whoever can
    start a turn for it (the workspace host), attached to its registry when that is made."""

    on_wake: Callable[[BackgroundWake], None]
    on_list: Callable[[], None]
    on_attach: Callable[[BackgroundProcesses], None]  # the registry, once it is made

    def attach(self, procs: BackgroundProcesses) -> None:
        procs.on_wake = self.on_wake
        procs.on_list = self.on_list
        self.on_attach(procs)


class BackgroundProcesses:
    """The background processes of one session."""

    def __init__(self, scratch_dir: str, *, ring_bytes: int = RING_BYTES) -> None:
        self.scratch_dir = scratch_dir
        self.ring_bytes = ring_bytes
        self.signal = ChangeSignal()
        self._procs: dict[str, BackgroundProcess] = {}
        self._closed = False
        # Set by whoever can give the session a turn (the workspace host).
        self.on_wake: Callable[[BackgroundWake], None] | None = None
        self.on_list: Callable[[], None] | None = None

    @property
    def can_wake(self) -> bool:
        """Whether a monitor's wake-ups reach someone who starts a turn with them."""
        return self.on_wake is not None

    def _wake(self, wake: BackgroundWake) -> None:
        if self.on_wake is not None and not self._closed:
            self.on_wake(wake)

    def _listed(self) -> None:
        if self.on_list is not None:
            self.on_list()

    def start(
        self,
        runtime: Runtime,
        script: str,
        *,
        env: Mapping[str, str],
        display_name: str,
        timeout_s: float,
        open_output: OutputOpener | None = None,
        output_filter: OutputFilter | None = None,
        monitor: MonitorSpec | None = None,
        command: str | None = None,
    ) -> BackgroundProcess:
        """`open_output`: the starting call's, for a live stream named by the taskId;
        `output_filter`: its filter for what is kept (masking); `monitor`: what wakes the
        session (needs `can_wake`); `command`: the script as lists show it (default:
        `script`, which may start with what xum sources before it)."""
        if self._closed:
            raise RuntimeError("the session is closing; no new background processes")
        if sum(not p.done for p in self._procs.values()) >= MAX_RUNNING:
            raise RuntimeError(
                f"{MAX_RUNNING} background processes are already running; stop one first"
            )
        process_id = random_suffix(8)
        while process_id in self._procs:  # pragma: no cover - 32^8 ids
            process_id = random_suffix(8)
        proc = BackgroundProcess(
            process_id,
            script=script,
            display_name=display_name,
            timeout_s=timeout_s,
            spill_path=spill_dir(self.scratch_dir) / f"bash-{process_id}.log",
            spill_cap=runtime.spill_cap,
            spill_visible=runtime.sees_local_files,
            ring_bytes=self.ring_bytes,
            on_change=self.signal.notify,
        )
        if open_output is not None:
            proc.live = open_output(proc.task_id)
        if output_filter is not None:
            from xum.tools.base import ByteSink

            proc.kept = output_filter(ByteSink(proc._keep))
        proc.command = script if command is None else command
        if monitor is not None:
            proc.arm(monitor, self._wake)
        proc.task = asyncio.create_task(self._run(proc, runtime, env), name=proc.task_id)
        self._procs[process_id] = proc
        self._forget_old()
        self._listed()
        return proc

    async def _run(self, proc: BackgroundProcess, runtime: Runtime, env: Mapping[str, str]) -> None:
        result: ExecResult | None = None
        try:
            result = await runtime.exec(
                proc.script, env=env, timeout_s=proc.timeout_s, on_output=proc.feed
            )
            await proc.publish_spill(runtime)  # before `finish`: a reader sees the published path
        except asyncio.CancelledError:
            if proc.stopped and not self._closed:  # task_stop: the model may read it next
                await proc.publish_spill(runtime)
            proc.finish(result, None)
            self._listed()
            raise
        except Exception as exc:  # e.g. the workspace directory vanished
            proc.finish(None, f"{type(exc).__name__}: {exc}")
            self._listed()
            return
        proc.finish(result, None)
        self._listed()

    def _forget_old(self) -> None:
        finished = [p for p in self._procs.values() if p.done]
        for proc in finished[: max(0, len(finished) - MAX_KEPT_FINISHED)]:
            del self._procs[proc.process_id]

    def get(self, task_id: str) -> BackgroundProcess | None:
        return self._procs.get(task_id.removeprefix(BASH_TASK_PREFIX))

    def processes(self, *, include_finished: bool = False) -> list[BackgroundProcess]:
        return [p for p in self._procs.values() if include_finished or not p.done]

    def active_ids(self) -> list[str]:
        return [p.task_id for p in self._procs.values() if not p.done]

    @staticmethod
    def is_ready(proc: BackgroundProcess) -> bool:
        return proc.done or proc.unread

    async def stop(self, proc: BackgroundProcess) -> None:
        """Kill the process group (SIGTERM, then SIGKILL after a grace) and wait for it."""
        if proc.done or proc.task is None:
            return
        proc.stopped = True
        proc.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proc.task
        if not proc.done:  # cancelled before its first step: nothing was started
            proc.finish(None, None)
            self._listed()

    async def stop_all(self) -> None:
        running = [p for p in self._procs.values() if not p.done]
        if running:
            await asyncio.gather(*(self.stop(p) for p in running), return_exceptions=True)

    async def close(self) -> None:
        """Stop every running process and refuse new ones; idempotent."""
        self._closed = True
        await self.stop_all()
