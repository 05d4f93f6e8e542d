"""One sandbox per session: a local workspace-write session's commands share one long-lived
bwrap (`xum.runtime.sandboxd`), with the boundaries a fresh bwrap per command would have.

Through the real middleware, bash tool and bubblewrap, like tests/integration/test_sandbox.py
(whose tests all take this path too): commands share the sandbox, every descendant of a command
ends with it while the sandbox lives on, a change of boundaries gets a new sandbox, and the
sandbox ends with the session and with xum, even when xum is killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.sandbox_rig import Rig, make_rig, set_sandbox
from tests.support.tools import process_gone, running_with, wait_gone, wait_none_running
from xum.core.paths import xum_root
from xum.engine.extensions import ToolCall
from xum.runtime.base import Runtime
from xum.runtime.sandbox import local_backend
from xum.runtime.sandboxd import SessionSandbox
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tools.base import ToolContext

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)

XUM = str(Path(sys.executable).with_name("xum"))
DEADLINE_S = 20.0


@dataclasses.dataclass
class Session(Rig):
    async def sandboxed_runtime(self) -> Runtime:
        """The runtime the middleware hands a bash call (the session sandbox's view)."""
        call = ToolCall(id="c", name="bash", arguments="{}")
        handed = await self.middleware.before_tool(call, self.ctx)
        assert isinstance(handed, ToolContext)
        return handed.runtime

    @property
    def sandbox_pid(self) -> int | None:
        box = self.middleware.session_sandbox
        return None if box is None else box.pid


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    workspace = make_repo(tmp_path / "repo")
    (workspace / ".xum").mkdir()  # else the first command's mount point makes it (a change)
    rig = make_rig(workspace)
    yield Session(rig.ctx, rig.workspace, rig.events, rig.middleware)
    await rig.middleware.aclose()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside /tmp (which workspace-write shares with the host, writable)."""
    path = Path(tempfile.mkdtemp(prefix="xum-sandbox-session-", dir="/var/tmp"))
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def is_bwrap(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"bwrap")
    except OSError:
        return False


async def test_two_commands_share_one_sandbox(session: Session) -> None:
    set_sandbox(mode="workspace-write")
    first = await session.bash("readlink /proc/self/ns/pid /proc/self/ns/mnt")
    pid = session.sandbox_pid
    second = await session.bash("readlink /proc/self/ns/pid /proc/self/ns/mnt")
    assert not first.is_error and not second.is_error, (first.output, second.output)
    assert pid is not None and is_bwrap(pid)
    assert session.sandbox_pid == pid
    assert first.output.split() == second.output.split()  # the same namespaces
    host_ns = os.readlink("/proc/self/ns/mnt")
    assert host_ns not in first.output  # and not the host's


async def test_the_command_gets_its_environment_directory_and_exit_status(
    session: Session,
) -> None:
    set_sandbox(mode="workspace-write")
    (session.workspace / "sub").mkdir()
    runtime = await session.sandboxed_runtime()
    out = bytearray()
    result = await runtime.exec(
        'pwd; echo "tmp=$TMPDIR probe=$PROBE"; exit 3',
        env={"PROBE": "yes"},
        cwd="sub",
        on_output=out.extend,
    )
    assert result.exit_code == 3, result
    assert out.decode().split() == [
        str(session.workspace / "sub"),
        f"tmp={xum_root() / 'scratch' / 'ws1' / 'sandbox-tmp'}",
        "probe=yes",
    ]
    killed = await runtime.exec("kill -TERM $$", env={})
    assert killed.signal == signal.SIGTERM and killed.exit_code is None
    assert session.sandbox_pid is not None


async def test_descendants_die_with_their_command_and_the_sandbox_lives_on(
    session: Session,
) -> None:
    """A `setsid` child with its output closed, a double-forked orphan and a plain background
    job: bash adopts them (a subreaper) and the launcher ends them when bash exits; the
    sandbox stays."""
    set_sandbox(mode="workspace-write")
    tag = f"311.{os.getpid()}{time.monotonic_ns() % 10000}"
    try:
        result = await session.bash(
            f"setsid sleep {tag}1 </dev/null >/dev/null 2>&1 &\n"
            f"( sleep {tag}2 </dev/null >/dev/null 2>&1 & )\n"
            f"sleep {tag}3 &\n"
            "echo started"
        )
        pid = session.sandbox_pid
        assert "started" in result.output
        assert await wait_none_running(tag, 10.0) == []
        assert pid is not None and not process_gone(pid)
        again = await session.bash("echo again")
        assert "again" in again.output and session.sandbox_pid == pid
    finally:
        for left in running_with(tag):
            with contextlib.suppress(OSError):
                os.kill(left, signal.SIGKILL)


async def test_a_timeout_ends_the_whole_tree(session: Session) -> None:
    set_sandbox(mode="workspace-write")
    tag = f"312.{os.getpid()}{time.monotonic_ns() % 10000}"
    runtime = await session.sandboxed_runtime()
    out = bytearray()
    try:
        result = await runtime.exec(
            f"setsid sleep {tag} </dev/null >/dev/null 2>&1 & echo started; sleep 60",
            env={},
            timeout_s=1,
            on_output=out.extend,
        )
        assert b"started" in out
        assert result.timed_out
        assert await wait_none_running(tag, 10.0) == []
    finally:
        for left in running_with(tag):
            with contextlib.suppress(OSError):
                os.kill(left, signal.SIGKILL)


async def test_a_change_of_boundaries_gets_a_new_sandbox(session: Session, outside: Path) -> None:
    set_sandbox(mode="workspace-write")
    granted = outside / "granted"
    granted.mkdir()
    denied = await session.bash(f"echo x > {granted}/file")
    first = session.sandbox_pid
    assert denied.is_error and not (granted / "file").exists()
    set_sandbox(mode="workspace-write", writable=[str(granted)])
    allowed = await session.bash(f"echo x > {granted}/file")
    assert not allowed.is_error, allowed.output
    assert (granted / "file").exists()
    second = session.sandbox_pid
    assert second is not None and second != first
    assert await wait_gone(first or 0, timeout=10.0)  # the old one is gone, not left behind
    # The read-only mode: a fresh bwrap per command (a throwaway $TMPDIR each), nothing written.
    set_sandbox(mode="read-only")
    refused = await session.bash("echo y > written-here")
    assert refused.is_error and not (session.workspace / "written-here").exists()


async def test_a_replaced_protected_file_is_seen_anew(session: Session) -> None:
    """`.git/config` is mounted by inode: a config rewritten on the host (git renames a new
    file over it) restarts the sandbox rather than showing the old one."""
    set_sandbox(mode="workspace-write")
    await session.bash("true")
    first = session.sandbox_pid
    subprocess.run(["git", "config", "xum.probe", "fresh"], cwd=session.workspace, check=True)
    result = await session.bash("git config --get xum.probe")
    assert "fresh" in result.output, result.output
    assert session.sandbox_pid != first


async def test_a_sandbox_that_cannot_start_says_so_and_leaves_it_to_the_caller() -> None:
    box = SessionSandbox()
    result = await box.run(
        ["bwrap", "--no-such-option"], "echo hi", env={}, cwd="/", timeout_s=10, on_output=None
    )
    assert result is None
    assert box.unavailable and "did not start" in box.unavailable
    box.close()


async def test_the_sandbox_ends_with_the_session(session: Session) -> None:
    set_sandbox(mode="workspace-write")
    await session.bash("true")
    pid = session.sandbox_pid
    assert pid is not None
    await session.middleware.aclose()
    assert await wait_gone(pid, timeout=10.0)


# -- xum killed with SIGKILL -----------------------------------------------------------------


def poll(condition: str, check: object, proc: subprocess.Popen[str] | None = None) -> None:
    assert callable(check)
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if proc is not None and proc.poll() is not None:
            _, stderr = proc.communicate()
            pytest.fail(f"xum exited ({proc.returncode}) before {condition}: {stderr[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"not within {DEADLINE_S} s: {condition}")
        time.sleep(0.05)


@pytest.fixture
def tag() -> Iterator[str]:
    value = f"313.{os.getpid()}{time.monotonic_ns() % 1000000}"
    yield value
    for pid in running_with(value):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_sigkill_of_xum_leaves_no_sandbox_behind(
    fake_llm: FakeLLM, tmp_path: Path, tag: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    script = f"setsid sleep {tag}1 </dev/null >/dev/null 2>&1 &\nsleep {tag}2\n"
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "wait"}))
    proc = subprocess.Popen(
        [XUM, "run", "--json", "--sandbox", "workspace-write", "wait in the sandbox"],
        cwd=repo,
        env=dict(os.environ, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_llm.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        poll("the command's sleeps run", lambda: len(running_with(tag)) >= 2, proc)
        # The sandbox: the bwraps whose arguments name this checkout.
        sandboxes = [pid for pid in running_with(str(repo)) if is_bwrap(pid)]
        # The session's sandbox, started by the command helper (a per-command one is xum's own
        # child).
        assert any(b"launch.py" in cmdline(parent_of(pid)) for pid in sandboxes), sandboxes
        proc.kill()
        proc.communicate()
        poll("no process of the command is left", lambda: not running_with(tag))
        poll("no sandbox is left", lambda: all(process_gone(pid) for pid in sandboxes))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


FIND_LAUNCHER = (
    # The bracket keeps the pattern from matching this very script in bash's command line.
    "for p in /proc/[0-9]*; do "
    'grep -qa "sandboxd_[l]aunch" "$p/cmdline" 2>/dev/null && echo "${p#/proc/}"; done'
)


async def test_a_command_that_kills_the_launcher_ends_its_sandbox_not_the_session(
    session: Session,
) -> None:
    set_sandbox(mode="workspace-write")
    runtime = await session.sandboxed_runtime()
    await runtime.exec("true", env={})
    first = session.sandbox_pid
    result = await runtime.exec(f"kill -KILL $({FIND_LAUNCHER}); sleep 30", env={}, timeout_s=20)
    assert not result.timed_out and result.exit_code == 255  # lost with its sandbox
    assert first is not None and await wait_gone(first, timeout=10.0)
    out = bytearray()
    again = await runtime.exec("echo again", env={}, on_output=out.extend)
    assert again.exit_code == 0 and out == b"again\n"
    assert session.sandbox_pid not in (None, first)


async def test_a_stopped_launcher_still_lets_a_timeout_end_the_command(session: Session) -> None:
    set_sandbox(mode="workspace-write")
    runtime = await session.sandboxed_runtime()
    await runtime.exec("true", env={})
    first = session.sandbox_pid
    result = await runtime.exec(f"kill -STOP $({FIND_LAUNCHER}); sleep 30", env={}, timeout_s=1)
    assert result.timed_out
    assert first is not None and await wait_gone(first, timeout=10.0)
    again = await runtime.exec("true", env={})
    assert again.exit_code == 0


async def test_an_orphan_lives_as_long_as_its_command_while_others_end(session: Session) -> None:
    """A double-forked child of a running command belongs to that command (its bash adopts it),
    not to the strays another command's end clears away."""
    set_sandbox(mode="workspace-write")
    runtime = await session.sandboxed_runtime()
    marks = session.workspace / "marks"
    marks.mkdir()
    out = bytearray()
    first = asyncio.create_task(
        runtime.exec(
            f"( sleep 30 & echo $! > {marks}/pid )\n"
            f"while [ ! -e {marks}/go ]; do sleep 0.02; done\n"
            f'kill -0 "$(cat {marks}/pid)" && echo alive',
            env={},
            timeout_s=20,
            on_output=out.extend,
        )
    )
    deadline = time.monotonic() + DEADLINE_S
    while not (marks / "pid").exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    other = await runtime.exec("true", env={})  # a command that ends meanwhile
    assert other.exit_code == 0
    (marks / "go").touch()
    result = await first
    assert result.exit_code == 0 and out == b"alive\n", (result, out)


def test_xum_run_leaves_no_sandbox_behind_when_it_ends(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo one", "display_name": "one"}),
        fakellm.tool_call("bash", {"script": "echo two", "display_name": "two"}),
        fakellm.text("done"),
    )
    done = subprocess.run(
        [XUM, "run", "--json", "--sandbox", "workspace-write", "run two commands"],
        cwd=repo,
        env=dict(os.environ, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_llm.url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "one" in done.stdout and "two" in done.stdout
    poll("no sandbox is left", lambda: not [p for p in running_with(str(repo)) if is_bwrap(p)])
