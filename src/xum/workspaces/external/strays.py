"""What a cancelled agent leaves running: commands it started during the prompt and did not stop.

Some agents end a cancelled prompt but leave the command they were running alive (Codex runs
each command in a sandbox of its own, in a new session, and its cancel does not reach it). xum
keeps the agent (its session, its warm caches) and stops only those leftovers.

A leftover is a process below the agent that

* did not exist when the prompt started (a server a command of an earlier turn started on
  purpose, or the agent's own helper processes, are left alone), and
* runs in a session of its own (the agent started it detached, as agents start the commands
  they run in a terminal or sandbox; the agent's own helpers share its session, and so does
  whatever shares a session with a process that ran before the prompt),

with everything below it. "During the prompt" compares each process's start time (kept by the
kernel) with the moment the prompt was sent, so nothing is scanned before a prompt.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class _Stat:
    ppid: int
    session: int
    started: int  # clock ticks after boot


def _stat(pid: int) -> _Stat | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:  # it ended between the listing and the read
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = text.rsplit(")", 1)[1].split()
    try:
        return _Stat(ppid=int(fields[1]), session=int(fields[3]), started=int(fields[19]))
    except (IndexError, ValueError):
        return None


def _table() -> dict[int, _Stat]:
    table: dict[int, _Stat] = {}
    try:
        entries = list(PROC.iterdir())
    except OSError:
        return table
    for entry in entries:
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                table[int(entry.name)] = stat
    return table


def _below(root: int, table: dict[int, _Stat]) -> list[int]:
    """The pids under `root` (not `root` itself), parents before children."""
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.ppid, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def now() -> int:
    """The moment to compare processes' start times with: clock ticks since boot, the unit
    and clock of /proc/<pid>/stat's start time (cheap: no scan of /proc before a prompt)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def stop_leftovers(root: int, since: int) -> list[int]:
    """Stop (SIGKILL) what the agent `root` started at or after `since` (`now()`) in sessions
    of their own, and everything below those; returns the pids signalled. The agent and its
    own helpers stay."""
    table = _table()
    agent = table.get(root)
    if agent is None:
        return []
    below = _below(root, table)
    # The agent's own sessions: the root's, and those of what ran before the prompt (xum's
    # sandbox starts the agent itself in a new session under bubblewrap).
    own = {agent.session} | {table[pid].session for pid in below if table[pid].started < since}
    doomed: list[int] = []
    for pid in below:
        stat = table[pid]
        if stat.started < since or pid in doomed:
            continue
        if stat.session not in own:
            doomed.extend([pid, *_below(pid, table)])
    stopped = []
    for pid in dict.fromkeys(doomed):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone already, or no longer ours to signal
            continue
        stopped.append(pid)
    return stopped
