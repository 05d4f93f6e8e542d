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
import marshal
import os
import selectors
import signal
import socket
import struct
import sys
from types import FrameType
from typing import NoReturn

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


class Helper:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []
        self.commands: set[int] = set()  # pids we started (adopted orphans are not reported)

    def send(self, kind: int, a: int, b: int) -> None:
        try:
            self.sock.sendall(REPLY.pack(kind, a, b))
        except OSError:  # xum is gone
            self.finish()

    def finish(self) -> NoReturn:
        kill_descendants()
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
                self.start(marshal.loads(body), passed)
            finally:
                for fd in passed:
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def start(
        self, request: tuple[int, list[bytes], dict[bytes, bytes], bytes], fds: list[int]
    ) -> None:
        request_id, argv, env, cwd = request
        output = fds[0]
        err_read, err_write = os.pipe()  # close-on-exec: end-of-file without data = exec'd
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(err_read)
            os.close(err_write)
            self.send(FAILED, request_id, (exc.errno or 1) * 2 + STAGE_EXEC)
            return
        if pid == 0:  # the child: never returns
            stage = STAGE_CWD
            try:
                os.close(err_read)
                os.setsid()  # own session => own process group, no controlling terminal
                if cwd:
                    os.chdir(cwd)
                stage = STAGE_EXEC
                os.dup2(output, 1)
                os.dup2(output, 2)
                # Python ignores these and the helper ignores SIGINT; a command starts with the
                # defaults, as it would from any shell.
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                signal.set_wakeup_fd(-1)
                os.execvpe(argv[0], argv, env)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.write(err_write, struct.pack("!ii", exc.errno or 1, stage))
            finally:
                os._exit(127)
        os.close(err_write)
        report = b""
        while True:
            try:
                chunk = os.read(err_read, 8)
            except InterruptedError:
                continue
            if not chunk:
                break
            report += chunk
        os.close(err_read)
        if len(report) >= 8:
            errno_, stage = struct.unpack("!ii", report[:8])
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            self.send(FAILED, request_id, errno_ * 2 + stage)
            return
        self.commands.add(pid)
        self.send(STARTED, request_id, pid)

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
            if pid in self.commands:
                self.commands.discard(pid)
                self.send(EXITED, pid, os.waitstatus_to_exitcode(status))


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
        pass  # the wake-up descriptor does the work

    def on_term(signum: int, frame: FrameType | None) -> None:
        helper.finish()  # stopped on purpose: the commands go too

    signal.signal(signal.SIGCHLD, on_chld)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is xum's to handle
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
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
