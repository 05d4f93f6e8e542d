"""Commands run with the sandbox off die with xum, however xum dies.

The real `xum run --sandbox off` runs a command (from the fake LLM) that leaves three kinds of
process behind: a `setsid` child (its own session, output closed, so neither the group kill nor
the output pipe finds it), a double-forked orphan (re-parented as soon as its parent exits) and a
plain background child. xum is then killed with SIGKILL, so none of its own cleanup runs; the
command helper (`xum.runtime.launch`) sees its socket close and ends them all. A second Ctrl-C
(xum leaves at once through `os._exit`) is covered the same way.

Processes are found by a tag in their command line; /proc is read defensively, since a process
can vanish between listing and reading.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.tools import running_with
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the command helper is Linux only"
)

XUM = str(Path(sys.executable).with_name("xum"))
DEADLINE_S = 20.0


def poll(condition: str, check: object, proc: subprocess.Popen[str] | None = None) -> None:
    """Poll `check()` until it is true; fail after DEADLINE_S (or when `proc` ended first)."""
    assert callable(check)
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if proc is not None and proc.poll() is not None:
            _, stderr = proc.communicate()
            pytest.fail(f"xum exited ({proc.returncode}) before {condition}: {stderr[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"not within {DEADLINE_S} s: {condition}")
        time.sleep(0.05)


def leaving_script(tag: str) -> str:
    """Three processes that outlive a plain group kill or the end of xum, each sleeping on a
    number that carries `tag` (1, 2, 3 appended), then waits."""
    return (
        f"setsid sleep {tag}1 </dev/null >/dev/null 2>&1 &\n"
        f"( sleep {tag}2 </dev/null >/dev/null 2>&1 & )\n"
        f"sleep {tag}3 &\n"
        "wait\n"
    )


@pytest.fixture
def tag() -> Iterator[str]:
    value = f"401.{os.getpid()}{time.monotonic_ns() % 1000000}"
    yield value
    for pid in running_with(value):  # never leave a test's sleeps behind, pass or fail
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def start_run(fake_llm: FakeLLM, repo: Path, script: str) -> subprocess.Popen[str]:
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "leave"}))
    return subprocess.Popen(
        [XUM, "run", "--json", "--sandbox", "off", "leave some processes behind"],
        cwd=repo,
        env=dict(os.environ, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_llm.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_of_xum_run_ends_every_command_process(
    fake_llm: FakeLLM, tmp_path: Path, tag: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = start_run(fake_llm, repo, leaving_script(tag))
    try:
        poll("the command's three sleeps run", lambda: len(running_with(tag)) >= 3, proc)
        proc.kill()
        proc.communicate()
        poll("no process of the command is left", lambda: not running_with(tag))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_second_ctrl_c_ends_the_commands_that_left_the_group(
    fake_llm: FakeLLM, tmp_path: Path, tag: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    # Deaf to SIGTERM, so the first Ctrl-C alone would take its grace period.
    proc = start_run(fake_llm, repo, "trap '' TERM\n" + leaving_script(tag))
    try:
        poll("the command's three sleeps run", lambda: len(running_with(tag)) >= 3, proc)
        proc.send_signal(signal.SIGINT)
        _wait_delivered(proc.pid, signal.SIGINT)  # else the kernel merges the two into one
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=DEADLINE_S)
        assert proc.returncode == 130, stderr
        poll("no process of the command is left", lambda: not running_with(tag))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _wait_delivered(pid: int, sig: int) -> None:
    """Until `sig` is no longer pending for `pid`."""
    bit = 1 << (sig - 1)

    def delivered() -> bool:
        try:
            with open(f"/proc/{pid}/status") as status:
                lines = status.read().splitlines()
        except OSError:
            return True  # gone: nothing is pending any more
        masks = [int(line.split()[1], 16) for line in lines if line[:6] in ("SigPnd", "ShdPnd")]
        return not any(mask & bit for mask in masks)

    poll("the signal was delivered", delivered)
