"""The session sandbox's launcher: the small process inside a session's one `bwrap` that starts
each of its commands.

xum starts it as the command of a long-lived `bwrap` (`xum.runtime.sandboxd`), as
`python -I -S sandboxd_launch.py`, on the standard library alone. Its standard output is a
stream socket whose other end only xum holds: requests come in on it and replies go out on it.
End-of-file means xum let go or died; the launcher then kills everything it started and exits,
and the sandbox (bwrap's PID namespace) ends with it.

Each command gets a process of its own, forked from the launcher (the *command reaper*): it
leads a new session and process group, marks itself a child subreaper, runs `bash` in its group,
and when bash exits it kills every descendant left (a `setsid` child, a double-forked orphan: the
subreaper adopts them all) before it reports bash's status and exits. So, as with a fresh bwrap per
command, every descendant of a command ends with it. The launcher is a subreaper too: a process
orphaned because its command reaper was killed comes up to the launcher, which kills it.

The wire (a stream socket, both ways; the same framing as `xum.runtime.launch`):
* request: `!II` (body length, descriptors) then a `marshal` body: `(RUN, id, argv, env, cwd)`
  with the command's output descriptor as SCM_RIGHTS, or `(STOP, id, signal)`, which signals the
  command's whole process group.
* replies: `!Bqq` records: READY (1, 0), STARTED (id, pid in the sandbox), EXITED (id, exit code
  as `os.waitstatus_to_exitcode` gives it). A command's reaper sends its EXITED itself (one hop
  less than through the launcher); the launcher sends it for a reaper that failed or was killed.
"""

from __future__ import annotations

import array
import contextlib
import importlib.util
import marshal
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import NoReturn

REQUEST_HEADER = struct.Struct("!II")
REPLY = struct.Struct("!Bqq")
READY, STARTED, EXITED = 1, 2, 4
RUN, STOP = 1, 2
START_FAILED_CODE = 127
REPORTED = 0  # a reaper's exit status when it reported its command's end itself
_MAX_FDS = 16
_RECV = 256 * 1024


def _load_launch() -> ModuleType:
    """`launch.py` next to this file (its subreaper and cleanup), loaded by path: this process
    runs without xum on its path."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
    spec = importlib.util.spec_from_file_location("xum_launch", here)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launch = _load_launch()


def _prctl_setter() -> Callable[[], int]:
    """A function that makes the calling process a child subreaper (0, else the errno), with
    libc loaded once here rather than in every command reaper (a few tenths of a millisecond
    each)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ulong, ulong, ulong, ulong]
    prctl.restype = ctypes.c_int

    def set_subreaper() -> int:
        if prctl(launch.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return ctypes.get_errno() or 1
        return 0

    return set_subreaper


set_subreaper: Callable[[], int] = launch.set_subreaper  # the cached one once main() runs


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass  # caught, not ignored: exec resets a caught signal in the command


def run_command(
    request_id: int,
    argv: list[bytes],
    env: dict[bytes, bytes],
    cwd: bytes,
    out_fd: int,
    sock: socket.socket,
    close: list[int],
) -> NoReturn:
    """The command reaper (a forked child of the launcher): run bash, end every descendant it
    left, then report how bash ended on the socket itself (one reply: a short write on a
    stream socket is never split among other writers' replies) and exit 0. The launcher
    reports for a reaper that exits otherwise (it failed, or was killed)."""
    try:
        signal.set_wakeup_fd(-1)
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)  # stray output must never reach the socket
        os.dup2(devnull, 2)
        os.close(devnull)
        os.setsid()  # its own group: a STOP signals the reaper, bash and bash's jobs together
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, _ignore)  # the group's signal is for bash; the reaper outlasts it
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if set_subreaper() != 0:
            raise OSError("the command reaper cannot adopt orphans")
        try:
            child = subprocess.Popen(
                argv, stdin=0, stdout=out_fd, stderr=out_fd, cwd=cwd or None, env=env
            )
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.write(out_fd, f"xum sandbox: the command did not start: {exc}\n".encode())
            raise
        os.close(out_fd)
        while True:
            try:
                _, status = os.waitpid(child.pid, 0)
                break
            except InterruptedError:
                continue
        child.returncode = code = os.waitstatus_to_exitcode(status)
        if _has_children():  # the usual command leaves none: no /proc scan then
            launch.kill_descendants()
        sock.sendall(REPLY.pack(EXITED, request_id, code))
    except BaseException:
        with contextlib.suppress(BaseException):
            launch.kill_descendants()
        os._exit(START_FAILED_CODE)
    os._exit(REPORTED)


def _has_children() -> bool:
    """Whether this process has a child (live, or a zombie, which is reaped on the way)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        if pid == 0:
            return True  # one still runs


class Launcher:
    def __init__(self, sock: socket.socket, keep: list[int]) -> None:
        self.sock = sock
        self.keep = keep  # descriptors a command reaper closes (the wake-up pipe)
        self.buffer = b""
        self.fds: list[int] = []
        self.commands: dict[int, int] = {}  # reaper pid -> request id
        self.by_id: dict[int, int] = {}  # request id -> reaper pid

    def send(self, kind: int, a: int, b: int) -> None:
        try:
            self.sock.sendall(REPLY.pack(kind, a, b))
        except OSError:  # xum is gone
            self.finish()

    def finish(self) -> NoReturn:
        launch.kill_descendants()
        os._exit(0)

    def readable(self) -> None:
        try:
            data, ancdata, _flags, _addr = self.sock.recvmsg(
                _RECV, socket.CMSG_SPACE(_MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC
            )
        except InterruptedError:
            return
        except OSError:
            self.finish()
        if not data:
            self.finish()  # end-of-file: xum died or let go
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
                self.handle(marshal.loads(body), passed)
            finally:
                for fd in passed:  # the reaper has its copy; ours would hold the pipe open
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def handle(self, request: tuple[object, ...], fds: list[int]) -> None:
        if request[0] == STOP:
            _, request_id, sig = request
            assert isinstance(request_id, int) and isinstance(sig, int)
            pid = self.by_id.get(request_id)
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.killpg(pid, sig)
            return
        _, request_id, argv, env, cwd = request
        assert isinstance(request_id, int) and isinstance(argv, list) and fds
        assert isinstance(env, dict) and isinstance(cwd, bytes)
        # The reaper closes every descriptor but its command's: another command's output pipe
        # held open here would keep that command's call waiting.
        close = [*self.keep, *fds[1:], *self.fds]
        pid = os.fork()
        if pid == 0:
            run_command(request_id, argv, env, cwd, fds[0], self.sock, close)
        self.commands[pid] = request_id
        self.by_id[request_id] = pid
        self.send(STARTED, request_id, pid)

    def reap(self) -> None:
        strays = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid == 0:
                break
            request_id = self.commands.pop(pid, None)
            if request_id is None:
                strays = True  # an adopted orphan ended: there may be more
                continue
            self.by_id.pop(request_id, None)
            code = os.waitstatus_to_exitcode(status)
            if code != REPORTED:
                self.send(EXITED, request_id, code)
            # A reaper that exited on its own ended every descendant first; one killed by a
            # signal (a STOP, or its own command) may have left orphans to the launcher.
            strays = strays or code < 0
        if strays:
            self.kill_strays()

    def kill_strays(self) -> None:
        """Kill every child that is not a command reaper: orphans of a reaper that was killed
        before it could end them."""
        own_group = os.getpgid(0)
        for pid, group in launch._children():
            if pid in self.commands:
                continue
            if group != own_group and group not in self.commands:
                with contextlib.suppress(OSError):
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def main() -> int:
    # Standard output is the socket to xum; standard error goes nowhere, so that nothing but
    # replies is ever written on the socket.
    sock = socket.socket(fileno=os.dup(1))
    os.set_inheritable(sock.fileno(), False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    wake_read, wake_write = os.pipe()
    launcher = Launcher(sock, [wake_read, wake_write])
    global set_subreaper
    if launch.set_subreaper() != 0:
        return 1  # no READY: xum falls back to a bwrap per command
    set_subreaper = _prctl_setter()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, _ignore)
    signal.signal(signal.SIGTERM, lambda _s, _f: launcher.finish())
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGHUP, _ignore)
    launcher.send(READY, 1, 0)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, "sock")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    while True:
        for key, _ in selector.select():
            if key.data == "sock":
                launcher.readable()
            else:
                with contextlib.suppress(OSError):
                    while os.read(wake_read, 4096):
                        pass
                launcher.reap()
        launcher.reap()


if __name__ == "__main__":
    sys.exit(main())
