"""Run a bash script in its own process group and stop the whole group when asked.

The group is the unit of cleanup: a script's background jobs (`sleep 300 &`) share it, so a
timeout or an interrupt that kills the group leaves no orphans behind.

The output pipe is ours, not asyncio's: asyncio's subprocess `wait()` also waits for its pipes
to close, so a background job that inherited stdout would hang the call after the script
itself exited. With our own pipe, exit and end-of-output are separate events and the pipe can
be closed whenever we decide to stop reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from xum.runtime import childwatch, pipeholders, reaper
from xum.runtime.base import ExecResult, OutputSink

READ_CHUNK = 256 * 1024
PIPE_SIZE = 1024 * 1024  # a larger pipe buffer means fewer wake-ups for chatty commands
# After SIGTERM the group gets this long to exit before SIGKILL.
TERM_GRACE_S = 1.0
# After the script itself exits, background processes that still hold the output pipe get this
# long to finish writing; then the group is stopped (they belong to this call's output).
PIPE_DRAIN_GRACE_S = 0.25
# How long to keep reading after the group was killed. A process that left the group (setsid)
# and still holds the pipe is found through the pipe and stopped (`pipeholders`) after
# HOLDER_CHECK_S; whatever is left after that is not waited for.
EOF_AFTER_KILL_S = 1.0
HOLDER_CHECK_S = 0.05
_POLL_S = 0.02


class Child(Protocol):
    """A started command: an `asyncio.subprocess.Process`, or a `reaper.Child` when the command
    helper started it."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


def _proc_stat(pid: int | str) -> tuple[bytes, int, int, int] | None:
    """(state, parent pid, process group, session) from `/proc/<pid>/stat`, or None when it
    cannot be read (the process is gone, or this is not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            # The command name (in parentheses) may itself contain ") ": split at the last one.
            fields = stat_file.read().rsplit(b")", 1)[1].split()
        return fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def _group_alive(pgid: int) -> bool:
    """True while a process of the group still runs. Zombies do not count: an orphan that
    died waits for init to reap it, and some inits (in containers) are slow to do so."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed its credentials; it still exists
        return True
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            stat = _proc_stat(entry.name)
            if stat is not None and stat[2] == pgid and stat[0] not in (b"Z", b"X"):
                return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_child_groups() -> None:
    """SIGKILL the process group of every child of this process, or of its command helper, that
    leads its own session: how xum starts commands (bash, background jobs, ssh). Linux only (it
    reads /proc); elsewhere a no-op."""
    me = os.getpid()
    # The command helper's commands count as ours; the helper itself is spared, since killing it
    # would orphan what it adopted (it kills all of that itself once xum exits).
    helper = reaper.helper_pid()
    parents = {me} if helper is None else {me, helper}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return
    for pid in pids:
        stat = _proc_stat(pid)
        if stat is not None and stat[1] in parents and stat[3] == pid and pid != helper:
            _signal_group(pid, signal.SIGKILL)


async def stop_group(pgid: int, proc: Child) -> None:
    """SIGTERM the group, wait briefly for it to empty, then SIGKILL what is left.

    The SIGKILL is sent in `finally`, so even a second cancellation during the grace period
    cannot leave the group running.
    """
    _signal_group(pgid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + TERM_GRACE_S
        while time.monotonic() < deadline:
            if proc.returncode is not None and not _group_alive(pgid):
                return
            await asyncio.sleep(_POLL_S)
    finally:
        _signal_group(pgid, signal.SIGKILL)


class _PipeReader:
    """Reads the non-blocking end of the output pipe from the event loop."""

    def __init__(self, fd: int, on_output: OutputSink | None) -> None:
        self.fd = fd
        self.inode = os.fstat(fd).st_ino
        self.on_output = on_output
        self.eof = asyncio.get_running_loop().create_future()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(fd, self._readable)
        self._closed = False

    def _readable(self) -> None:
        try:
            chunk = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            self._finish(exc)
            return
        if not chunk:
            self._finish(None)
            return
        if self.on_output is not None:
            try:
                self.on_output(chunk)
            except Exception as exc:  # a failing sink fails the call, not the loop
                self._finish(exc)

    def _finish(self, exc: BaseException | None) -> None:
        self._loop.remove_reader(self.fd)
        if not self.eof.done():
            if exc is None:
                self.eof.set_result(None)
            else:
                self.eof.set_exception(exc)

    async def wait_eof(self, timeout: float | None) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.eof), timeout)
        return self.eof.done()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self.fd)
        os.close(self.fd)
        if not self.eof.done():
            self.eof.cancel()

    def raise_if_failed(self) -> None:
        if self.eof.done() and not self.eof.cancelled():
            self.eof.result()


async def _stop_everything(pgid: int, proc: Child, reader: _PipeReader) -> None:
    """Stop the group, then whatever outside it still holds the output pipe."""
    await stop_group(pgid, proc)
    if not await reader.wait_eof(HOLDER_CHECK_S):
        await pipeholders.stop_holders(reader.inode, reader.eof.done, grace_s=TERM_GRACE_S)


async def _start(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: str, output_fd: int, via_helper: bool
) -> Child:
    if via_helper:
        child = await reaper.spawn(argv, env=env, cwd=cwd, output_fd=output_fd)
        if child is not None:
            return child
    childwatch.install()
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=output_fd,
        stderr=output_fd,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,  # own session => own process group, no controlling TTY
    )


async def run_script(
    script: str,
    *,
    env: Mapping[str, str],
    cwd: str,
    timeout_s: float | None,
    on_output: OutputSink | None,
    argv_prefix: Sequence[str] = (),
    via_helper: bool = True,
) -> ExecResult:
    """`argv_prefix`: a program that runs the `bash -c` after it (the sandbox's `bwrap ...`).

    A command without a prefix (no sandbox) starts through the command helper where it runs
    (`xum.runtime.reaper`: its descendants die with xum, even on SIGKILL); `via_helper=False`
    starts it directly (the benchmark's baseline). The sandbox needs no helper: bubblewrap's PID
    namespace ends with the command, and `--die-with-parent` ends it with xum."""
    started = time.monotonic()
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    try:
        try:
            proc = await _start(
                [*argv_prefix, "bash", "-c", script],
                env=env,
                cwd=cwd,
                output_fd=write_fd,
                via_helper=via_helper and not argv_prefix,
            )
        finally:
            os.close(write_fd)  # the child has its copy; ours would keep the pipe open forever
    except reaper.StartCancelled as cancelled:
        # Cancelled while the helper started it: stopped like a command cancelled later.
        os.set_blocking(read_fd, False)
        reader = _PipeReader(read_fd, None)
        try:
            await _stop_everything(cancelled.child.pid, cancelled.child, reader)
        finally:
            reader.close()
        raise
    except BaseException:
        os.close(read_fd)
        raise
    pgid = proc.pid
    os.set_blocking(read_fd, False)
    reader = _PipeReader(read_fd, on_output)

    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                await proc.wait()
                # The script is done; what is still in the pipe arrives at once. A background
                # job that keeps the pipe open would hold this call forever: it gets a short
                # grace, then the group is stopped.
                if not await reader.wait_eof(PIPE_DRAIN_GRACE_S):
                    await _stop_everything(pgid, proc, reader)
                    await reader.wait_eof(EOF_AFTER_KILL_S)
        except TimeoutError:
            timed_out = True
            await _stop_everything(pgid, proc, reader)
            await proc.wait()
            await reader.wait_eof(EOF_AFTER_KILL_S)
        reader.raise_if_failed()
    except asyncio.CancelledError:
        await _stop_everything(pgid, proc, reader)
        raise
    except BaseException:
        _signal_group(pgid, signal.SIGKILL)
        raise
    finally:
        reader.close()
    code = proc.returncode
    return ExecResult(
        exit_code=code if code is not None and code >= 0 else None,
        signal=-code if code is not None and code < 0 else None,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
    )
