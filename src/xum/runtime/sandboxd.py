"""One sandbox per session: a long-lived `bwrap` whose launcher starts each command.

A fresh bubblewrap per command costs its namespaces every time (the mount namespace alone is a
few milliseconds). A `SessionSandbox` starts one `bwrap` with the session's boundaries, running
the launcher (`xum.runtime.sandboxd_launch`), and hands it each command: the script, its
environment and working directory, and the write end of its output pipe. Every descendant of a
command still ends with it (each command's bash is a subreaper, and the launcher kills what an
ended command left: see the launcher); timeouts and interrupts signal the command's whole
group, then kill it.

Never stale: the boundaries are the exact `bwrap` arguments a per-command sandbox would get now,
plus the identity (device, inode) of every path they mount. A command whose boundaries differ
(a mode change, a new denied path, a protected directory that appeared) restarts the session's
sandbox, or, while other commands still run in it, gets a fresh bwrap of its own. Where the
session sandbox cannot start, the caller falls back to a bwrap per command, as before.

Tied to xum's life: the `bwrap` is started by the command helper (`xum.runtime.reaper`), which
kills all it started when xum dies, even by SIGKILL; the launcher also ends when its socket to
xum closes. bwrap's `--die-with-parent` follows the helper, a single-threaded process.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import fcntl
import logging
import marshal
import os
import select
import signal
import socket
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from xum.runtime import reaper
from xum.runtime.base import ExecResult, OutputSink
from xum.runtime.process import (
    EOF_AFTER_KILL_S,
    PIPE_DRAIN_GRACE_S,
    PIPE_SIZE,
    TERM_GRACE_S,
    _PipeReader,
)
from xum.runtime.sandbox_settings import find_bwrap
from xum.runtime.sandboxd_launch import EXITED, READY, REPLY, REQUEST_HEADER, RUN, STOP

log = logging.getLogger(__name__)

_LAUNCHER = str(Path(__file__).with_name("sandboxd_launch.py"))
READY_TIMEOUT_S = 10.0
SEND_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0  # after SIGKILL, for the launcher to report the command ended
LOST_EXIT_CODE = 255  # what a command reports when its sandbox vanished under it
_BIND_FLAGS = ("--bind", "--ro-bind", "--dev-bind")

Key = tuple[tuple[str, ...], tuple[tuple[int, int] | None, ...]]
# (STOP, id, signal) or (RUN, id, argv, env, cwd)
Request = tuple[int, int, int] | tuple[int, int, list[bytes], dict[bytes, bytes], bytes]


def boundaries_key(argv: Sequence[str]) -> Key:
    """The bwrap arguments and the identity of every path they mount: a directory or file
    replaced on the host since the sandbox started (a rewritten `.git/config`) would still show
    its old self through a mount made before, so it counts as a change."""
    ids: list[tuple[int, int] | None] = []
    for index, arg in enumerate(argv[:-1]):
        if arg in _BIND_FLAGS:
            try:
                st = os.stat(argv[index + 1])
                ids.append((st.st_dev, st.st_ino))
            except OSError:
                ids.append(None)
    return tuple(argv), tuple(ids)


class SandboxLost(OSError):
    """The session sandbox ended while a command was being handed to it."""


class _Server:
    """One running session sandbox: the bwrap (started through the command helper) and the
    socket to its launcher."""

    def __init__(self, key: Key, child: reaper.Child, sock: socket.socket) -> None:
        self.key = key
        self.child = child
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.alive = True
        self.next_id = 0
        self.running: dict[int, asyncio.Future[int]] = {}
        self.buffer = b""
        self.loop.add_reader(sock.fileno(), self._readable)

    @property
    def pid(self) -> int:
        """The bwrap's pid on this machine."""
        return self.child.pid

    def _readable(self) -> None:
        try:
            chunk = self.sock.recv(64 * 1024)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        self.buffer += chunk
        usable = len(self.buffer) - len(self.buffer) % REPLY.size
        for offset in range(0, usable, REPLY.size):
            kind, request_id, code = REPLY.unpack_from(self.buffer, offset)
            future = self.running.get(request_id) if kind == EXITED else None
            if future is not None and not future.done():
                future.set_result(code)
        self.buffer = self.buffer[usable:]

    def close(self) -> None:
        """End the sandbox and everything in it; commands still waiting report it lost."""
        if not self.alive:
            return
        self.alive = False
        with contextlib.suppress(RuntimeError):  # its loop may be closed (a dropped session)
            self.loop.remove_reader(self.sock.fileno())
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()  # the launcher's cue: it kills its commands and exits
        # The bwrap leads its own session (the helper starts it so): its group is the sandbox.
        if self.child.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.child.pid, signal.SIGKILL)
        for future in self.running.values():
            if not future.done():
                with contextlib.suppress(RuntimeError):
                    future.set_result(LOST_EXIT_CODE)

    def _send(self, body: Request, fds: Sequence[int] = ()) -> None:
        """Send one request whole. Synchronous on purpose: a request is never cut by a
        cancellation or interleaved with another's; the launcher reads at once, so waiting for
        room in the socket's buffer (a very long script) is short, and bounded."""
        payload = marshal.dumps(body)
        data = memoryview(REQUEST_HEADER.pack(len(payload), len(fds)) + payload)
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        deadline = time.monotonic() + SEND_TIMEOUT_S
        while data:
            try:
                sent = self.sock.sendmsg([data], ancillary)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                self.close()
                raise SandboxLost(f"the session sandbox is gone: {exc}") from exc
            if sent:
                data, ancillary = data[sent:], []  # the descriptors went with the first byte
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self.sock], [], left)[1]:
                self.close()  # the launcher stopped reading (stopped, or stuck)
                raise SandboxLost("the session sandbox stopped taking commands")

    async def stop(self, request_id: int, done: asyncio.Future[int]) -> None:
        """SIGTERM the command's group, a grace period, then SIGKILL (sent even when this is
        cancelled in between). A launcher that does not answer even then (a command stopped
        it) takes the whole sandbox with it."""
        try:
            with contextlib.suppress(OSError):
                self._send((STOP, request_id, int(signal.SIGTERM)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(done), TERM_GRACE_S)
        finally:
            if not done.done() and self.alive:
                with contextlib.suppress(OSError):
                    self._send((STOP, request_id, int(signal.SIGKILL)))
        if not done.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(done), STOP_TIMEOUT_S)
        if not done.done():
            log.warning("the session sandbox did not stop a command; ending the sandbox")
            self.close()

    async def run(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str,
        timeout_s: float | None,
        on_output: OutputSink | None,
    ) -> ExecResult | None:
        """The command's result; None when the sandbox was lost before it took the command
        (which then never ran: the caller may start it elsewhere)."""
        started = time.monotonic()
        os.stat(cwd)  # a missing directory fails as it would for a command started here
        self.next_id += 1
        request_id = self.next_id
        done: asyncio.Future[int] = self.loop.create_future()
        self.running[request_id] = done
        read_fd, write_fd = os.pipe()
        with contextlib.suppress(OSError):
            fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        request = (
            RUN,
            request_id,
            [b"bash", b"-c", os.fsencode(script)],
            {os.fsencode(k): os.fsencode(v) for k, v in env.items()},
            os.fsencode(cwd),
        )
        try:
            try:
                self._send(request, [write_fd])
            finally:
                os.close(write_fd)  # the launcher has its copy
        except BaseException as exc:
            os.close(read_fd)
            self.running.pop(request_id, None)
            if isinstance(exc, SandboxLost):
                return None  # the launcher runs only a whole request: this one never started
            raise
        os.set_blocking(read_fd, False)
        reader = _PipeReader(read_fd, on_output)
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    await asyncio.shield(done)
                    # The launcher ended every descendant before it said so: the pipe closes now.
                    await reader.wait_eof(PIPE_DRAIN_GRACE_S + EOF_AFTER_KILL_S)
            except TimeoutError:
                timed_out = True
                await self.stop(request_id, done)
                await asyncio.shield(done)
                await reader.wait_eof(EOF_AFTER_KILL_S)
            reader.raise_if_failed()
        except asyncio.CancelledError:
            await self.stop(request_id, done)
            raise
        except BaseException:
            with contextlib.suppress(OSError):
                self._send((STOP, request_id, int(signal.SIGKILL)))
            raise
        finally:
            reader.close()
            self.running.pop(request_id, None)
        code = done.result()
        return ExecResult(
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
        )


async def _start_server(key: Key, boundaries: Sequence[str]) -> _Server:
    """Start bwrap with `boundaries` running the launcher, through the command helper; OSError
    saying why not."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    argv = [*boundaries, "--chdir", "/", "--", sys.executable, "-I", "-S", _LAUNCHER]
    argv[0] = find_bwrap() or argv[0]  # the helper's search path is not xum's
    try:
        try:
            child = await reaper.spawn(
                argv,
                env={"PATH": os.environ.get("PATH", os.defpath)},
                cwd="/",
                output_fd=theirs.fileno(),
            )
        finally:
            theirs.close()
        if child is None:
            raise OSError(
                "the command helper, which ties the sandbox to xum's life, is unavailable "
                f"({reaper.unavailable_reason()})"
            )
    except BaseException:
        ours.close()
        raise
    ours.setblocking(False)
    loop = asyncio.get_running_loop()
    said = b""
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            while len(said) < REPLY.size:
                chunk = await loop.sock_recv(ours, 4096)
                if not chunk:
                    break
                said += chunk
    except TimeoutError:
        said += b"\nno answer in time"
    except BaseException:  # cancelled: the half-started sandbox goes
        ours.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        raise
    if said[: REPLY.size] != REPLY.pack(READY, 1, 0) or len(said) != REPLY.size:
        ours.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        text = said.decode(errors="replace").strip().splitlines()
        raise OSError(f"the session sandbox did not start: {text[-1] if text else 'no reply'}")
    return _Server(key, child, ours)


class SessionSandbox:
    """A session's sandbox server, started at its first command (or ahead of it, `start`) and
    restarted when the boundaries change. `run` returns None where the caller must start a bwrap of its own."""

    def __init__(self) -> None:
        # In a list of its own: what the finalizer closes, without holding the sandbox alive.
        self._servers: list[_Server] = []
        # A session dropped without `close` (a test's, an error path) still ends its sandbox.
        self._finalizer = weakref.finalize(self, _close_all, self._servers)
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self.unavailable: str | None = None  # why the session sandbox is not used, once known
        self.closed = False

    @property
    def _server(self) -> _Server | None:
        return self._servers[-1] if self._servers else None

    @property
    def pid(self) -> int | None:
        """The running bwrap's pid, if one runs."""
        server = self._server
        return server.pid if server is not None and server.alive else None

    async def run(
        self,
        boundaries: Sequence[str],
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str,
        timeout_s: float | None,
        on_output: OutputSink | None,
    ) -> ExecResult | None:
        server = await self._server_for(boundaries)
        if server is None:
            return None
        return await server.run(script, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output)

    async def start(self, boundaries: Sequence[str]) -> bool:
        """Have the sandbox of `boundaries` running (started now unless it already runs), for
        commands yet to come; False when it cannot run. A command that comes while it starts
        waits for it, as it would for a start of its own."""
        return await self._server_for(boundaries) is not None

    async def _server_for(self, boundaries: Sequence[str]) -> _Server | None:
        if self.unavailable is not None or self.closed:
            return None
        key = boundaries_key(boundaries)
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        async with self._lock:
            server = self._server
            if server is not None and server.alive and server.loop is loop and server.key == key:
                return server
            if server is not None and server.alive:
                if server.running and server.loop is loop:
                    # Its commands keep the boundaries they started with; this one gets a fresh
                    # bwrap with the new ones.
                    return None
                server.close()
            self._servers.clear()
            if self.closed:
                return None
            try:
                started = await _start_server(key, boundaries)
            except OSError as exc:
                self.unavailable = str(exc)
                log.warning("each command starts its own sandbox: %s", exc)
                return None
            if self.closed:  # closed while it started
                started.close()
                return None
            self._servers.append(started)
            return started

    def close(self) -> None:
        """End the sandbox and every command in it (the session is closing)."""
        self.closed = True
        self._finalizer()


def _close_all(servers: list[_Server]) -> None:
    while servers:
        servers.pop().close()
