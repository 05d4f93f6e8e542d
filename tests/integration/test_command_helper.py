"""The command helper (`xum.runtime.reaper`, `xum.runtime.launch`) starts unsandboxed commands:
they still report output, exit codes, signals, timeouts and cancellation as before, a start
that fails raises as a direct start would, and when the process that started them ends, every
process they left behind ends too. Real processes throughout; the helper is shared by the whole
test process, as it is by xum's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tools import running_with
from xum.runtime import reaper
from xum.runtime.base import ExecResult
from xum.runtime.local import LocalRuntime

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the command helper is Linux only"
)


async def wait_until(check: object, what: str, timeout: float = 20.0) -> None:
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}: {_describe()}"
        await asyncio.sleep(0.02)


def _describe() -> str:
    """What runs under the test's tags, for a failure message."""
    lines = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b" 40" in cmdline.replace(b"\0", b" "):
            lines.append(f"{name} {stat[:4]} {cmdline!r}")
    return "; ".join(lines)


def kill_all(tag: str) -> None:
    for pid in running_with(tag):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def new_tag(kind: int) -> str:
    return f"40{kind}.{os.getpid()}{time.monotonic_ns() % 1000000}"


async def run(
    script: str, tmp_path: Path, *, cwd: str | None = None, timeout_s: float | None = None
) -> tuple[ExecResult, str]:
    chunks: list[bytes] = []
    result = await LocalRuntime(str(tmp_path)).exec(
        script,
        env={"HELPER_TEST": "yes \u00e9"},
        cwd=cwd,
        timeout_s=timeout_s,
        on_output=chunks.append,
    )
    return result, b"".join(chunks).decode()


async def test_a_command_runs_as_the_helpers_child_and_reports_as_before(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result, output = await run(
        'echo "out $HELPER_TEST"; echo err >&2; pwd; echo "ppid $PPID"; exit 7',
        tmp_path,
        cwd="sub",
    )
    assert result.exit_code == 7
    lines = output.splitlines()
    assert lines[:3] == ["out yes \u00e9", "err", str(tmp_path / "sub")]
    helper = reaper.helper_pid()
    assert helper is not None, reaper.unavailable_reason()
    assert lines[3] == f"ppid {helper}"

    result, output = await run("echo before; kill -9 $$", tmp_path)
    assert result.exit_code is None and result.signal == signal.SIGKILL
    assert output == "before\n"
    assert reaper.helper_pid() == helper  # one helper serves every command


async def test_timeout_and_cancel_still_stop_the_whole_command(tmp_path: Path) -> None:
    tag = new_tag(2)
    try:
        result, _ = await run(f"sleep {tag}1 & sleep {tag}2", tmp_path, timeout_s=0.3)
        assert result.timed_out
        await wait_until(lambda: not running_with(f"{tag}"), "the timed-out command ended")

        task = asyncio.create_task(run(f"setsid sleep {tag}3 & sleep {tag}4", tmp_path))
        await wait_until(lambda: len(running_with(tag)) >= 2, "the command started")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The group, and the `setsid` child that still holds the output, are stopped.
        await wait_until(lambda: not running_with(tag), "the cancelled command ended")
    finally:
        kill_all(tag)


async def test_a_command_cancelled_while_it_starts_is_killed_once_it_runs(tmp_path: Path) -> None:
    tag = new_tag(5)
    await run("true", tmp_path)  # the helper runs: the next start suspends on its reply only
    try:
        # The descendant that leaves the group at once is stopped too (through the pipe).
        task = asyncio.create_task(run(f"setsid sleep {tag}1 & sleep {tag}2", tmp_path))
        await asyncio.sleep(0)  # the request is sent; the reply has not been read yet
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until(lambda: not running_with(tag), "the cancelled command was stopped")

        # Cancelled twice while it starts: the group is killed once it runs.
        task = asyncio.create_task(run(f"sleep {tag}3", tmp_path))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The helper answers in order: once this one ran, the abandoned one was started (and,
        # its caller gone, sent SIGKILL).
        await run("true", tmp_path)
        await wait_until(lambda: not running_with(tag), "the abandoned command was killed")
    finally:
        kill_all(tag)


async def test_a_start_that_fails_raises_like_a_direct_start(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing_dir:
        await run("true", tmp_path, cwd="no-such-dir")
    assert missing_dir.value.filename == str(tmp_path / "no-such-dir")

    read_fd, write_fd = os.pipe()
    try:
        with pytest.raises(FileNotFoundError) as missing_program:
            await reaper.spawn(
                ["no-such-program-xum"],
                env={"PATH": "/usr/bin:/bin"},
                cwd=str(tmp_path),
                output_fd=write_fd,
            )
        assert missing_program.value.filename == "no-such-program-xum"
    finally:
        os.close(read_fd)
        os.close(write_fd)
    helper = reaper.helper_pid()
    # A NUL byte (a model can send one) is refused as a direct start refuses it; the helper,
    # and whatever else it runs, is untouched.
    with pytest.raises(ValueError, match="null byte"):
        await run("echo a\0b", tmp_path)
    _, output = await run("echo still fine", tmp_path)
    assert output == "still fine\n"
    assert reaper.helper_pid() == helper


async def test_a_lost_helper_is_replaced_by_the_next_command(tmp_path: Path) -> None:
    tag = new_tag(3)
    await run("true", tmp_path)
    helper = reaper.helper_pid()
    assert helper is not None
    try:
        task = asyncio.create_task(run(f"sleep {tag}", tmp_path))
        await wait_until(lambda: bool(running_with(tag)), "the command started")
        os.kill(helper, signal.SIGKILL)  # no teardown: its command is orphaned, for real
        # The exit can no longer be learned: it reads as 255, and the call still stops the
        # command's group (which holds the output), so it cannot hang.
        result, _ = await asyncio.wait_for(task, 20)
        assert result.exit_code == reaper.LOST_EXIT_CODE
        await wait_until(lambda: not running_with(tag), "the orphaned command was stopped")
        result, output = await run("echo again", tmp_path)
        assert output == "again\n"
        assert reaper.helper_pid() not in (None, helper)
    finally:
        kill_all(tag)


def test_what_a_command_left_behind_ends_when_xum_exits(tmp_path: Path) -> None:
    """A detached job (own session, output closed) outlives its command, but not the xum
    process: a normal exit closes the helper's socket just as SIGKILL does."""
    tag = new_tag(4)
    program = (
        "import asyncio, sys\n"
        "from xum.runtime.local import LocalRuntime\n"
        "rt = LocalRuntime(sys.argv[1])\n"
        "script = f'setsid sleep {sys.argv[2]} </dev/null >/dev/null 2>&1 & echo started'\n"
        "r = asyncio.run(rt.exec(script, env={}))\n"
        "print(r.exit_code, flush=True)\n"
        "import time\n"
        "while True: time.sleep(1)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program, str(tmp_path), tag],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "0"
        assert running_with(tag), "the detached job should outlive its command"
        proc.terminate()
        proc.wait(timeout=20)
        deadline = time.monotonic() + 20
        while running_with(tag):
            assert time.monotonic() < deadline, "the detached job outlived xum"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_all(tag)


def test_a_forked_copy_of_xum_does_not_keep_the_commands_alive(tmp_path: Path) -> None:
    """A fork of xum (without exec) would inherit the socket, and the helper waits for every
    copy of it to close: the copy drops its own at the fork, so SIGKILL of xum still ends the
    commands while the fork lives on."""
    tag = new_tag(6)
    program = (
        "import asyncio, os, sys, time\n"
        "from xum.runtime.local import LocalRuntime\n"
        "rt = LocalRuntime(sys.argv[1])\n"
        "script = f'setsid sleep {os.environ[\"TAG\"]} </dev/null >/dev/null 2>&1 & echo started'\n"
        "asyncio.run(rt.exec(script, env={}))\n"
        "if os.fork() == 0:\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
        "print('forked', flush=True)\n"
        "while True: time.sleep(1)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program, str(tmp_path)],  # the tag in the environment: the
        env=dict(os.environ, TAG=tag),  # fork that lives on must not match it
        stdout=subprocess.PIPE,
        text=True,
    )
    forked: list[int] = []
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "forked"
        forked = [
            pid for pid in _children_of(proc.pid) if b"-c" in _cmdline(pid) and pid != proc.pid
        ]
        assert running_with(tag), "the detached job should outlive its command"
        proc.kill()
        proc.wait(timeout=20)
        deadline = time.monotonic() + 20
        while running_with(tag):
            assert time.monotonic() < deadline, f"the detached job outlived xum: {_describe()}"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in forked:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        kill_all(tag)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children_of(parent: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(parent):
            found.append(int(name))
    return found
