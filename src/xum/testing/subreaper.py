"""Run a command under a child subreaper that reaps every orphan at once (`python -m
xum.testing.subreaper CMD [ARGS...]`).

Why the tests need it: in a container whose PID 1 never reaps, an orphaned process (bwrap leaves
one behind when it exits) stays a zombie for good, and a zombie still counts as a member of its
process group. The ssh runtime's remote bootstrap asks `kill -0 -- -GROUP` after a command ends
to learn whether background jobs linger, so on such a machine every command that orphaned a
process waited out the bootstrap's whole grace (about 0.8 s) for a group holding only zombies.
A real host's init reaps at once; the test sshd, started through this wrapper, gets the same.

The wrapper is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux), so orphans of the
command's descendants become its children; it waits for all of them, passes SIGTERM, SIGINT and
SIGHUP on to the command, and exits with the command's status once the command has ended.
Where prctl is unavailable it still runs the command, only without the reaping of orphans."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from types import FrameType

PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m xum.testing.subreaper CMD [ARGS...]", file=sys.stderr)
        return 2
    _become_subreaper()
    child = os.fork()
    if child == 0:  # the command
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:  # cannot happen before the command is waited for
            return 1
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code  # killed by a signal: the shell's 128+N


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
