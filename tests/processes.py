"""Processes the tests start and then expect to end."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
