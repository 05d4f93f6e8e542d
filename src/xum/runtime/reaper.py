"""Unsandboxed commands that die with xum: the client side of the command helper.

Without the sandbox, a command runs in its own process group and xum stops that group when the
command ends, times out or is interrupted. Nothing of that runs when xum itself is killed with
SIGKILL, and a process that left the group (`setsid`, a double fork) escapes a group kill
anyway. So on Linux xum starts its unsandboxed commands through one helper process
(`xum.runtime.launch`, started while the model answers the first request of a session whose
commands run unsandboxed, `start_early`, or else at the first such command): the helper is a
child subreaper, so every orphaned descendant of a command becomes its child rather than
init's, and it kills all of them when the socket to xum reaches end-of-file, which the kernel
guarantees when xum dies, however it dies.

The helper starts each command (fork, `setsid`, exec) and reports its exit code back, since
xum cannot wait for a process that is not its own child. A reader thread takes those reports, so
the helper serves every event loop of the process (the server runs one, tests many).

Where the helper cannot run (not Linux, `prctl` refused, no Python to start it with), `spawn`
returns None and the caller starts the command itself, as before.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import logging
import marshal
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from xum.core.ownsecrets import without_own_secrets
from xum.runtime.launch import (
    EXITED,
    FAILED,
    READY,
    REPLY,
    REQUEST_HEADER,
    STAGE_CWD,
    STARTED,
)

log = logging.getLogger(__name__)

_LAUNCHER = str(Path(__file__).with_name("launch.py"))
READY_TIMEOUT_S = 10.0
# What a command reports when the helper vanished before telling how it ended (the same code
# asyncio reports for a child someone else reaped).
LOST_EXIT_CODE = 255


class HelperLostError(OSError):
    """The command helper exited before it could start the command."""


class StartCancelled(asyncio.CancelledError):
    """The caller was cancelled while the helper started its command, which now runs: `child`
    is that command, to be stopped like any cancelled command, then the cancellation goes on."""

    def __init__(self, child: Child) -> None:
        super().__init__()
        self.child = child


class Child:
    """A command the helper started: the part of `asyncio.subprocess.Process` that
    `xum.runtime.process` uses (`pid`, `returncode`, `wait()`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, argv0: str, cwd: str) -> None:
        self.pid = 0
        self.returncode: int | None = None
        self.abandoned = False  # the caller gave up before it learned the pid
        self._argv0 = argv0
        self._cwd = cwd
        self._loop = loop
        self._started: asyncio.Future[None] = loop.create_future()
        self._exited: asyncio.Future[int] = loop.create_future()

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    # Called on the child's event loop (through call_soon_threadsafe).
    def _set_started(self) -> None:
        if not self._started.done():
            self._started.set_result(None)

    def _set_failed(self, exc: BaseException) -> None:
        if not self._started.done():
            self._started.set_exception(exc)

    def _set_exited(self, code: int) -> None:
        self.returncode = code
        if not self._exited.done():
            self._exited.set_result(code)

    def _error(self, code: int) -> OSError:
        errno_, stage = divmod(code, 2)
        where = self._cwd if stage == STAGE_CWD else self._argv0
        return OSError(errno_, os.strerror(errno_), where)

    def _call(self, method: object, *args: object) -> None:
        """Run `method(*args)` on the child's loop; a loop that is closed has nobody waiting."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(method, *args)  # type: ignore[arg-type]


class _Connection:
    """One running helper and the socket to it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", _LAUNCHER, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=without_own_secrets(os.environ),
                # Its own session: a Ctrl-C on xum's terminal must not reach it.
                start_new_session=True,
                cwd="/",  # every command names its own; the helper pins no directory
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.lock = threading.Lock()  # guards alive, next_id, pending, running
        self.send_lock = threading.Lock()
        self.alive = True
        self.next_id = 0
        self.pending: dict[int, Child] = {}
        self.running: dict[int, Child] = {}
        try:
            self._await_ready()
        except BaseException:
            self.close()
            raise
        threading.Thread(target=self._read_loop, name="xum-command-helper", daemon=True).start()

    def _await_ready(self) -> None:
        self.sock.settimeout(READY_TIMEOUT_S)
        try:
            data = self._recv_exactly(REPLY.size)
        finally:
            self.sock.settimeout(None)
        kind, ok, error = REPLY.unpack(data)
        if kind != READY or not ok:
            raise OSError(
                error or 1, f"the command helper cannot adopt orphans: {os.strerror(error)}"
            )

    def _recv_exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise OSError("the command helper exited at start")
            data += chunk
        return data

    def close(self) -> None:
        """Stop the helper, and with it every command it started."""
        with self.lock:
            self.alive = False
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader thread, if one runs
        self.sock.close()  # the helper's cue: it kills its descendants, then exits
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # stuck (it never got going): it has no commands
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait()

    def submit(
        self, child: Child, argv: Sequence[str], env: Mapping[str, str], cwd: str, fd: int
    ) -> None:
        with self.lock:
            self.next_id += 1
            request_id = self.next_id
        payload = marshal.dumps(
            (
                request_id,
                [os.fsencode(arg) for arg in argv],
                {os.fsencode(k): os.fsencode(v) for k, v in env.items()},
                os.fsencode(cwd),
            )
        )
        data = REQUEST_HEADER.pack(len(payload), 1) + payload
        with self.lock:
            if not self.alive:
                raise HelperLostError("the command helper exited")
            self.pending[request_id] = child
        try:
            # One request at a time on the socket, whichever thread sends it. A lock of its own:
            # the reader thread never waits for a send to finish.
            with self.send_lock:
                fds = array.array("i", [fd])
                sent = self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                if sent < len(data):
                    self.sock.sendall(data[sent:])
        except OSError as exc:
            with self.lock:
                self.pending.pop(request_id, None)
            raise HelperLostError(f"the command helper is gone: {exc}") from exc

    def abandon(self, child: Child) -> None:
        """The caller was cancelled while the command started: kill it once it is known."""
        with self.lock:
            child.abandoned = True
            pid = child.pid
        if pid:
            _kill_group(pid)

    def _read_loop(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = self.sock.recv(64 * 1024)
            except OSError:
                chunk = b""
            if not chunk:
                self._lost()
                return
            buffer += chunk
            usable = len(buffer) - len(buffer) % REPLY.size
            for offset in range(0, usable, REPLY.size):
                self._dispatch(*REPLY.unpack_from(buffer, offset))
            buffer = buffer[usable:]

    def _dispatch(self, kind: int, a: int, b: int) -> None:
        if kind == STARTED:
            with self.lock:
                child = self.pending.pop(a, None)
                if child is None:
                    return
                child.pid = b
                self.running[b] = child
                abandoned = child.abandoned
            if abandoned:
                _kill_group(b)
            child._call(child._set_started)
        elif kind == FAILED:
            with self.lock:
                child = self.pending.pop(a, None)
            if child is not None:
                child._call(child._set_failed, child._error(b))
        elif kind == EXITED:
            with self.lock:
                child = self.running.pop(a, None)
            if child is not None:
                child._call(child._set_exited, b)

    def _lost(self) -> None:
        """The helper exited (killed, or it failed): nothing it started can be waited for now.
        The next command starts a new helper."""
        with self.lock:
            on_purpose = not self.alive  # `close` let it go
            self.alive = False
            pending, self.pending = self.pending, {}
            running, self.running = self.running, {}
        for child in pending.values():
            child._call(child._set_failed, HelperLostError("the command helper exited"))
        for child in running.values():
            child._call(child._set_exited, LOST_EXIT_CODE)
        if not on_purpose:
            log.warning("the command helper exited; the next command starts a new one")
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


_connection: _Connection | None = None
_unavailable: str | None = None if sys.platform.startswith("linux") else "not Linux"
_start_lock = threading.Lock()
# The start in progress, per event loop: commands that arrive together wait for one start instead
# of each taking a thread of the loop's executor to queue on `_start_lock`.
_starting: dict[asyncio.AbstractEventLoop, asyncio.Future[_Connection | None]] = {}


def unavailable_reason() -> str | None:
    """Why commands do not go through the helper, or None when they do (or will)."""
    return _unavailable


def helper_pid() -> int | None:
    """The running helper's pid, if one runs."""
    conn = _connection
    return conn.process.pid if conn is not None and conn.alive else None


def _connect() -> _Connection | None:
    global _connection, _unavailable
    with _start_lock:
        if _connection is not None and _connection.alive:
            return _connection
        if _unavailable is not None:
            return None
        try:
            if not sys.executable:
                raise OSError("no Python executable to start it with")
            _connection = _Connection()
        except (OSError, ValueError) as exc:
            _unavailable = str(exc) or type(exc).__name__
            log.warning(
                "commands outside the sandbox may outlive xum: the command helper did not "
                "start (%s)",
                _unavailable,
            )
            return None
        return _connection


def start_early() -> None:
    """Start the helper ahead of the first command that needs it (`sandbox_settings.
    helper_soon`). A helper that cannot start is left for that command to meet and report,
    exactly as without this call."""
    global _connection
    with _start_lock:
        if (_connection is not None and _connection.alive) or _unavailable is not None:
            return
        if not sys.executable:
            return
        with contextlib.suppress(OSError, ValueError):
            _connection = _Connection()


async def spawn(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: str, output_fd: int
) -> Child | None:
    """Start `argv` through the helper in a session of its own, stdin from /dev/null, stdout
    and stderr on `output_fd`; None when the helper is unavailable (start it yourself). Raises
    OSError as starting it directly would (a missing `cwd`, no such program)."""
    if _unavailable is not None:
        return None
    conn = _connection
    if conn is None or not conn.alive:
        conn = await _started_connection()
        if conn is None:
            return None
    # What a direct start refuses, refused alike (the helper would answer only EINVAL).
    if any("\0" in text for text in (*argv, *env.keys(), *env.values(), cwd)):
        raise ValueError("embedded null byte")
    if any("=" in key or not key for key in env):
        raise ValueError("illegal environment variable name")
    child = Child(asyncio.get_running_loop(), argv[0], cwd)
    conn.submit(child, argv, env, cwd, output_fd)
    try:
        await asyncio.shield(child._started)
    except asyncio.CancelledError:
        # The command may already run, with descendants that left its group: the caller has to
        # stop it as it stops any command it cancels. The helper's answer is close (it answers
        # each request at once), so wait for it, then hand the child over.
        try:
            await asyncio.shield(child._started)
        except asyncio.CancelledError:  # cancelled again: the group at least, once it runs
            conn.abandon(child)
            # Nobody awaits the start any more: a failure must not be logged as never retrieved.
            child._started.add_done_callback(_swallow)
            raise
        except OSError:
            raise asyncio.CancelledError from None  # it never started: nothing to stop
        raise StartCancelled(child) from None
    return child


async def _started_connection() -> _Connection | None:
    """The helper, started off the loop (the first start takes tens of milliseconds), once for
    all the commands of this loop that wait for it."""
    loop = asyncio.get_running_loop()
    start = _starting.get(loop)
    if start is None:
        start = loop.create_task(asyncio.to_thread(_connect))
        _starting[loop] = start
        start.add_done_callback(lambda _done: _starting.pop(loop, None))
    return await asyncio.shield(start)


def _swallow(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


def _forget_in_child() -> None:
    """A forked copy of xum must not hold the socket: the helper waits for *every* copy of it to
    close before it stops the commands."""
    global _connection
    conn, _connection = _connection, None
    if conn is not None:
        with contextlib.suppress(OSError):
            conn.sock.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
