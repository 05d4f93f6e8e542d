"""The session sandbox's launcher: the small process inside a session's one `bwrap` that starts
each of its commands.

xum starts it as the command of a long-lived `bwrap` (`xum.runtime.sandboxd`), as
`python -I -S sandboxd_launch.py`, on the standard library alone. Its standard output is a
stream socket whose other end only xum holds: requests come in on it and replies go out on it.
End-of-file means xum let go or died; the launcher then kills everything it started and exits,
and the sandbox (bwrap's PID namespace) ends with it.

Each command's `bash` is started in a session (and process group) of its own and, before it
execs, is marked a child subreaper (the mark survives exec): an orphan among its descendants (a
`setsid` child, a double fork) is re-parented to bash, not lost. When bash exits, whatever it
left is re-parented to the launcher, itself a subreaper; the launcher's only legitimate children
are the commands still running, so it kills every other child (and their groups, again until
none is left) before it reports the command's end. So, as with a fresh bwrap per command, every
descendant of a command ends with it, and when its command is reported ended it is gone.

The wire (a stream socket, both ways; the same framing as `xum.runtime.launch`):
* request: `!II` (body length, descriptors) then a `marshal` body: `(RUN, id, argv, env, cwd)`
  with the command's output descriptor as SCM_RIGHTS, or `(STOP, id, signal)`, which signals the
  command's whole process group.
* replies: `!Bqq` records: READY (1, 0), STARTED (id, pid in the sandbox), EXITED (id, exit code
  as `os.waitstatus_to_exitcode` gives it).
"""

from __future__ import annotations

import contextlib
import importlib.util
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


def _prctl_setter() -> Callable[[], None]:
    """What a command runs between fork and exec: mark itself a child subreaper (OSError when it
    cannot, so the command is not started). libc is loaded once, here."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ulong, ulong, ulong, ulong]
    prctl.restype = ctypes.c_int

    def set_subreaper() -> None:
        if prctl(launch.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno() or 1, "the command cannot be made a subreaper")

    return set_subreaper


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass  # caught, not ignored: exec resets a caught signal in the command


class Launcher:
    def __init__(self, sock: socket.socket, as_subreaper: Callable[[], None]) -> None:
        self.channel = launch.Channel(sock)  # launch.py's framing, both ways
        self.as_subreaper = as_subreaper
        self.commands: dict[int, int] = {}  # bash pid (its group, its session) -> request id
        self.by_id: dict[int, int] = {}  # request id -> bash pid

    def send(self, kind: int, a: int, b: int) -> None:
        self.channel.send(kind, a, b)

    def finish(self) -> NoReturn:
        launch.finish()  # ends the process
        os._exit(0)  # (for the type checker: `launch` is loaded by path)

    def readable(self) -> None:
        self.channel.read(self.handle)

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
        try:
            child = subprocess.Popen(
                argv,
                stdin=0,  # the launcher's own: /dev/null
                stdout=fds[0],
                stderr=fds[0],
                cwd=cwd or None,
                env=env,
                start_new_session=True,  # its own group: a STOP signals bash and its jobs
                preexec_fn=self.as_subreaper,
            )
        except Exception as exc:  # no such directory, a refused prctl: said in its output
            with contextlib.suppress(OSError):
                os.write(fds[0], f"xum sandbox: the command did not start: {exc}\n".encode())
            self.send(EXITED, request_id, START_FAILED_CODE)
            return
        # Popen never reaps it: `reap` does (returncode set first, so no Popen waits for it).
        child.returncode = 0
        self.commands[child.pid] = request_id
        self.by_id[request_id] = child.pid
        self.send(STARTED, request_id, child.pid)

    def reap(self) -> None:
        ended: list[tuple[int, int]] = []
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
                strays = True  # an orphan that ended: there may be more
                continue
            self.by_id.pop(request_id, None)
            ended.append((request_id, os.waitstatus_to_exitcode(status)))
        if ended or strays:
            # What an ended bash left came up to the launcher: gone before its end is reported.
            self.kill_strays()
        for request_id, code in ended:
            self.send(EXITED, request_id, code)

    def kill_strays(self) -> None:
        """Kill every child that is not a running command's bash, and reap it, until none is
        left (a stray's own children come up to the launcher when it dies)."""
        own_group = os.getpgid(0)
        while True:
            strays = [(pid, group) for pid, group in launch._children() if pid not in self.commands]
            if not strays:
                return
            for pid, group in strays:
                if group != own_group and group not in self.commands:
                    with contextlib.suppress(OSError):
                        os.killpg(group, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid, _group in strays:
                with contextlib.suppress(ChildProcessError, InterruptedError):
                    os.waitpid(pid, 0)


def main() -> int:
    # Standard output is the socket to xum; standard error goes nowhere, so that nothing but
    # replies is ever written on the socket.
    sock = socket.socket(fileno=os.dup(1))
    os.set_inheritable(sock.fileno(), False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    if launch.set_subreaper() != 0:
        return 1  # no READY: xum falls back to a bwrap per command
    launcher = Launcher(sock, _prctl_setter())
    wake_read, wake_write = os.pipe()
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
