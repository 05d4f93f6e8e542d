"""Finding the processes that still hold a command's output pipe, and stopping them.

A command's process group is stopped as a unit, but a descendant that left the group
(`setsid sleep 302 &`, a server that daemonizes) survives that, still holding the write end of
the output pipe: it would run on after the tool returned. Outside the sandbox (whose PID
namespace ends every descendant with the command) this is how xum still finds them: Linux shows
each open pipe as `pipe:[<inode>]` in `/proc/<pid>/fd`, so the holders of this command's pipe are
the processes with a descriptor on its inode. A descendant that closed or redirected its output
is not found this way (documented in docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable

_POLL_S = 0.02


def holders(inode: int) -> list[int]:
    """Pids (other than this process) with a descriptor on the pipe `inode`. Linux only; empty
    elsewhere or when /proc cannot be read."""
    target = f"pipe:[{inode}]"
    me = os.getpid()
    found: list[int] = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or not ours to look at
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    found.append(pid)
                    break
            except OSError:
                continue
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def stop_holders(inode: int, closed: Callable[[], bool], *, grace_s: float) -> int:
    """SIGTERM every holder of the pipe, give them `grace_s` to let go of it (`closed()` turns
    true when the read side saw end-of-file), then SIGKILL the ones still holding it. Returns
    how many processes were signalled."""
    pids = await asyncio.to_thread(holders, inode)
    if not pids:
        return 0
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and not closed():
        await asyncio.sleep(_POLL_S)
    if not closed():
        _signal_all(await asyncio.to_thread(holders, inode), signal.SIGKILL)
    return len(pids)
