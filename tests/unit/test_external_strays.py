"""What xum stops after a cancelled prompt (`xum.workspaces.external.strays`): only what the
agent started during the prompt in a session of its own, with what is below it; the agent, its
helpers in its own session and what ran before the prompt stay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from xum.workspaces.external import strays

# A stand-in agent: on each line of its stdin it starts a `sleep` with the line's number,
# detached ("d ...": a new session, as agents start their commands) or not ("h ...": a helper).
AGENT = """
import subprocess, sys
for line in sys.stdin:
    kind, seconds = line.split()
    subprocess.Popen(["sleep", seconds], start_new_session=(kind == "d"))
    print("started", flush=True)
"""


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # it ended between the listing and the read
            continue
        if marker.encode() in cmdline.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def _wait(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within 10 s")
        time.sleep(0.05)


@pytest.fixture
def agent() -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", AGENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    yield process
    strays.stop_leftovers(process.pid, 0)  # the detached sleeps
    os.killpg(process.pid, signal.SIGKILL)  # the agent and its helper
    process.wait(timeout=10)


def _start(agent: subprocess.Popen[str], kind: str, seconds: str) -> None:
    assert agent.stdin is not None and agent.stdout is not None
    agent.stdin.write(f"{kind} {seconds}\n")
    agent.stdin.flush()
    assert agent.stdout.readline().strip() == "started"


def test_only_detached_processes_started_during_the_prompt_are_stopped(
    agent: subprocess.Popen[str],
) -> None:
    earlier, helper, leftover = "301.11", "302.22", "303.33"
    _start(agent, "d", earlier)  # a server an earlier turn started on purpose
    _wait(lambda: _alive(earlier), "the earlier sleep starting")
    # Start times count in clock ticks: the prompt starts a tick after the earlier sleep.
    tick = strays.now()
    _wait(lambda: strays.now() > tick, "the next clock tick")
    since = strays.now()
    _start(agent, "h", helper)  # the agent's own helper, in its session
    _start(agent, "d", leftover)  # the cancelled command
    _wait(lambda: _alive(leftover) and _alive(helper) and _alive(earlier), "the sleeps starting")

    stopped = strays.stop_leftovers(agent.pid, since)

    assert len(stopped) == 1
    _wait(lambda: not _alive(leftover), "the leftover ending")
    assert _alive(helper) and _alive(earlier)
    assert agent.poll() is None  # the agent itself goes on


def test_a_gone_agent_has_no_leftovers() -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(timeout=10)
    assert strays.stop_leftovers(done.pid, 0) == []
