"""The command helper: a small process that starts xum's unsandboxed commands and ends every
process they leave behind when xum goes, even when xum is killed with SIGKILL.

xum starts one per process (`xum.runtime.reaper`), as `python -I -S launch.py <fd>`: it runs
on the standard library alone, and imports nothing of xum. It marks itself a child subreaper
(Linux `prctl(PR_SET_CHILD_SUBREAPER)`), so a descendant whose parent exits (`setsid cmd &`, a
double fork) is re-parented to it instead of to init, and it stays findable. Its one link to
xum is a socket that only xum holds: end-of-file on it means xum is gone, however it died, and
the helper then kills every descendant and exits.

Not PR_SET_PDEATHSIG: that signal follows the *thread* that started the helper, so a worker
thread of xum that ends would take the helper, and every command, with it. End-of-file on the
socket follows the process.

The wire (a stream socket, both ways):
* request: `!II` (body length, 1) then a `marshal` body `(id, argv, env, cwd)` (bytes all
  through, so names that are not UTF-8 pass unchanged); the command's output descriptor rides
  along as SCM_RIGHTS on the request's first bytes.
* replies: `!Bqq` records: READY (subreaper set or not, errno), STARTED (id, pid),
  FAILED (id, errno * 2 + stage: 0 cwd, 1 exec), EXITED (pid, exit code as
  `os.waitstatus_to_exitcode` gives it).
"""

from __future__ import annotations

import array
import contextlib
import errno
import marshal
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn

REQUEST_HEADER = struct.Struct("!II")
REPLY = struct.Struct("!Bqq")
READY, STARTED, FAILED, EXITED = 1, 2, 3, 4
STAGE_CWD, STAGE_EXEC = 0, 1
PR_SET_CHILD_SUBREAPER = 36
_MAX_FDS = 16
_RECV = 256 * 1024


def set_subreaper() -> int:
    """0 when this process is now a child subreaper, else the errno (ENOSYS off Linux)."""
    if not sys.platform.startswith("linux"):
        return 38  # ENOSYS
    import ctypes  # only here: the import costs a few milliseconds

    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    libc.prctl.argtypes = [ctypes.c_int, ulong, ulong, ulong, ulong]  # variadic: say the widths
    libc.prctl.restype = ctypes.c_int
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return ctypes.get_errno() or 1
    return 0


def _children() -> list[tuple[int, int]]:
    """(pid, process group) of every live child of this process, from /proc. A process can
    vanish between listing and reading, so every read may fail."""
    me = os.getpid()
    found: list[tuple[int, int]] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat_file:
                fields = stat_file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        try:
            if int(fields[1]) == me and fields[0] not in (b"Z", b"X"):
                found.append((int(name), int(fields[2])))
        except (IndexError, ValueError):
            continue
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant, until none is left. A subreaper adopts each orphan, so killing
    its children and reaping them brings the grandchildren up to it; when waitpid says there are
    no children at all, no descendant remains."""
    own_group = os.getpgid(0)
    while True:
        for pid, group in _children():
            if group != own_group:
                with contextlib.suppress(OSError):
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        # Reap whatever else already exited before looking for newly adopted orphans.
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


def finish() -> NoReturn:
    """End this helper and everything it started."""
    kill_descendants()
    os._exit(0)


class Channel:
    """The socket to xum: framed requests in (with the descriptors they pass), replies out. A
    failure of it, or its end (xum died or let go), ends the helper (`finish`). The sandbox's
    launcher (`sandboxd_launch.py`) speaks the same framing through this class."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []

    def send(self, kind: int, a: int, b: int) -> None:
        try:
            self.sock.sendall(REPLY.pack(kind, a, b))
        except OSError:  # xum is gone
            finish()

    def read(self, on_request: Callable[[Any, list[int]], None]) -> None:
        """Read what arrived and hand each whole request to `on_request` with its descriptors,
        closed here afterwards (a command has its own copies; ours would hold its pipe open)."""
        try:
            data, ancdata, _flags, _addr = self.sock.recvmsg(
                _RECV, socket.CMSG_SPACE(_MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC
            )
        except InterruptedError:
            return
        except OSError:
            finish()
        if not data:
            finish()  # end-of-file: xum died or let go
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                self.fds.extend(fds)
        self.buffer += data
        while len(self.buffer) >= REQUEST_HEADER.size:
            length, nfds = REQUEST_HEADER.unpack_from(self.buffer)
            end = REQUEST_HEADER.size + length
            if len(self.buffer) < end or len(self.fds) < nfds:
                return
            body, self.buffer = self.buffer[REQUEST_HEADER.size : end], self.buffer[end:]
            passed, self.fds = self.fds[:nfds], self.fds[nfds:]
            try:
                on_request(marshal.loads(body), passed)
            finally:
                for fd in passed:
                    with contextlib.suppress(OSError):
                        os.close(fd)


class Helper:
    def __init__(self, sock: socket.socket) -> None:
        self.channel = Channel(sock)
        # The commands started and not yet reaped (adopted orphans are reaped, not reported).
        self.commands: dict[int, subprocess.Popen[bytes]] = {}

    def send(self, kind: int, a: int, b: int) -> None:
        self.channel.send(kind, a, b)

    def finish(self) -> NoReturn:
        finish()

    def readable(self) -> None:
        self.channel.read(self.start)

    def start(
        self, request: tuple[int, list[bytes], dict[bytes, bytes], bytes], fds: list[int]
    ) -> None:
        """Start one command. Through `subprocess.Popen`: it forks with vfork where it can,
        which keeps a start under a millisecond (a plain `os.fork` of this interpreter costs
        more, in copy-on-write faults). Popen never reaps these children: `reap` does, and
        sets `returncode` first, so no Popen keeps a pid to wait for."""
        request_id, argv, env, cwd = request
        try:
            child = subprocess.Popen(
                argv,
                stdin=0,  # the helper's own stdin: /dev/null
                stdout=fds[0],
                stderr=fds[0],
                cwd=cwd or None,
                env=env,
                start_new_session=True,  # own session => own process group, no controlling TTY
            )
        except OSError as exc:
            stage = STAGE_CWD if cwd and exc.filename in (cwd, os.fsdecode(cwd)) else STAGE_EXEC
            self.send(FAILED, request_id, (exc.errno or 1) * 2 + stage)
            return
        except Exception:  # a request Popen refuses must not end the helper, and its commands
            self.send(FAILED, request_id, errno.EINVAL * 2 + STAGE_EXEC)
            return
        self.commands[child.pid] = child
        self.send(STARTED, request_id, child.pid)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
            if pid == 0:
                return
            child = self.commands.pop(pid, None)
            if child is not None:
                child.returncode = os.waitstatus_to_exitcode(status)
                self.send(EXITED, pid, child.returncode)


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    os.set_inheritable(sock.fileno(), False)
    helper = Helper(sock)
    error = set_subreaper()
    if error:
        helper.send(READY, 0, error)
        return 1
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)

    def on_chld(signum: int, frame: FrameType | None) -> None:
        pass  # the wake-up descriptor does the work (SIGCHLD)

    def on_term(signum: int, frame: FrameType | None) -> None:
        helper.finish()  # stopped on purpose: the commands go too

    signal.signal(signal.SIGCHLD, on_chld)
    signal.signal(signal.SIGTERM, on_term)
    # Caught, not ignored: an ignored signal would stay ignored in every command (a caught one
    # is reset by exec). The helper has its own session, so a terminal's Ctrl-C or hang-up
    # reaches only xum; these are for a stray `kill`.
    signal.signal(signal.SIGINT, on_chld)
    signal.signal(signal.SIGHUP, on_chld)
    helper.send(READY, 1, 0)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, "sock")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    while True:
        for key, _ in selector.select():
            if key.data == "sock":
                helper.readable()
            else:
                with contextlib.suppress(OSError):
                    while os.read(wake_read, 4096):
                        pass
                helper.reap()
        helper.reap()  # a SIGCHLD during a start is not lost


if __name__ == "__main__":
    sys.exit(main(sys.argv))
