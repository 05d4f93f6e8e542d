"""LocalRuntime: real processes and files. Process trees die on timeout and on cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import time
from pathlib import Path

import pytest

from tests.support.tools import kill_quietly, process_gone, wait_gone
from xum.runtime.base import NotRegularFileError
from xum.runtime.local import LocalRuntime


@pytest.fixture
def runtime(tmp_path: Path) -> LocalRuntime:
    (tmp_path / "ws").mkdir()
    (tmp_path / "tmp").mkdir()
    return LocalRuntime(str(tmp_path / "ws"), str(tmp_path / "tmp"))


class Collector:
    def __init__(self) -> None:
        self.data = bytearray()

    def __call__(self, chunk: bytes) -> None:
        self.data += chunk

    def text(self) -> str:
        return self.data.decode()

    async def wait_for_lines(self, count: int, timeout: float = 10.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.text().splitlines()
            if len(lines) >= count:
                return lines
            await asyncio.sleep(0.01)
        raise AssertionError(f"only got {self.text()!r}")


async def test_exec_merges_output_and_reports_exit_code(runtime: LocalRuntime) -> None:
    out = Collector()
    result = await runtime.exec(
        "echo out; echo err >&2; pwd; echo $XUM_X; cat; exit 3",
        env={"XUM_X": "from-env"},
        on_output=out,
    )
    assert result.exit_code == 3
    assert result.signal is None and not result.timed_out
    assert out.text().splitlines() == ["out", "err", runtime.workspace_path, "from-env"]


async def test_exec_keeps_the_base_environment(runtime: LocalRuntime) -> None:
    out = Collector()
    await runtime.exec('echo "$HOME|$GIT_TERMINAL_PROMPT"', env={}, on_output=out)
    assert out.text().strip() == f"{os.environ['HOME']}|0"


async def test_signal_is_reported_as_fact(runtime: LocalRuntime) -> None:
    result = await runtime.exec("kill -KILL $$", env={})
    assert result.exit_code is None
    assert result.signal == signal.SIGKILL


async def test_timeout_kills_the_whole_group(runtime: LocalRuntime, tmp_path: Path) -> None:
    out = Collector()
    finished = tmp_path / "finished"
    result = await runtime.exec(
        f"sleep 300 & echo $!; sleep 300 & echo $!; echo $$; wait; touch {finished}",
        env={},
        timeout_s=0.5,
        on_output=out,
    )
    assert result.timed_out
    assert result.exit_code is None and result.signal == signal.SIGTERM
    pids = [int(line) for line in out.text().split()]
    assert len(pids) == 3
    # Killed, not waited for: all three are gone and the script never got past its `wait`.
    assert await wait_gone(*pids)
    assert not finished.exists()


async def test_cancellation_kills_the_tree_and_reraises(runtime: LocalRuntime) -> None:
    out = Collector()
    task = asyncio.create_task(
        runtime.exec(
            "sleep 300 & echo $!; sleep 300 & echo $!; echo $$; wait", env={}, on_output=out
        )
    )
    pids = [int(line) for line in await out.wait_for_lines(3)]
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await wait_gone(*pids), "processes survived the cancellation"
    finally:
        for pid in pids:
            kill_quietly(pid)


async def test_term_ignoring_child_is_killed_after_the_grace(runtime: LocalRuntime) -> None:
    out = Collector()
    result = await runtime.exec(
        "trap '' TERM; sleep 300 & echo $!; wait", env={}, timeout_s=0.3, on_output=out
    )
    assert result.timed_out
    pid = int(out.text().split()[0])
    try:
        assert await wait_gone(pid)
    finally:
        kill_quietly(pid)


async def test_background_job_holding_the_pipe_does_not_hang_the_call(
    runtime: LocalRuntime, tmp_path: Path
) -> None:
    out = Collector()
    finished = tmp_path / "finished"
    result = await runtime.exec(
        f"bash -c 'sleep 300; touch {finished}' & echo $!; echo done", env={}, on_output=out
    )
    assert result.exit_code == 0
    assert out.text().split()[1] == "done"
    pid = int(out.text().split()[0])
    try:
        # The call ended without waiting for the job: the job was stopped, not finished.
        assert await wait_gone(pid)
        assert not finished.exists()
    finally:
        kill_quietly(pid)


async def test_detached_job_with_redirected_output_survives(runtime: LocalRuntime) -> None:
    out = Collector()
    result = await runtime.exec(
        "nohup sleep 300 >/dev/null 2>&1 & echo $!", env={}, timeout_s=10, on_output=out
    )
    assert result.exit_code == 0
    pid = int(out.text().split()[0])
    try:
        assert not process_gone(pid)
    finally:
        kill_quietly(pid)


async def test_read_bytes_with_limit(runtime: LocalRuntime) -> None:
    Path(runtime.workspace_path, "a.txt").write_bytes(b"0123456789")
    assert await runtime.read_bytes("a.txt") == b"0123456789"
    assert await runtime.read_bytes("a.txt", limit=4) == b"0123"


async def test_read_bytes_refuses_fifo_without_blocking(runtime: LocalRuntime) -> None:
    fifo = Path(runtime.workspace_path, "pipe")
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError):
        await asyncio.wait_for(runtime.read_bytes(str(fifo)), 5)
    with pytest.raises(IsADirectoryError):
        await runtime.read_bytes(runtime.workspace_path)
    with pytest.raises(FileNotFoundError):
        await runtime.read_bytes("missing")


async def test_atomic_write_keeps_permissions_and_creates_parents(
    runtime: LocalRuntime,
) -> None:
    script = Path(runtime.workspace_path, "run.sh")
    script.write_text("old")
    script.chmod(0o750)
    await runtime.write_bytes_atomic(str(script), b"new")
    assert script.read_bytes() == b"new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    await runtime.write_bytes_atomic("deep/er/new.txt", b"x")
    assert Path(runtime.workspace_path, "deep/er/new.txt").read_bytes() == b"x"
    leftovers = [p for p in Path(runtime.workspace_path).rglob("*") if "xum-tmp" in p.name]
    assert leftovers == []


async def test_stat_and_realpath(runtime: LocalRuntime, tmp_path: Path) -> None:
    ws = Path(runtime.workspace_path)
    (ws / "dir").mkdir()
    (ws / "dir" / "f").write_text("hi")
    (tmp_path / "outside").mkdir()
    (ws / "link").symlink_to(tmp_path / "outside")
    st = await runtime.stat("dir/f")
    assert st.exists and st.is_file and st.size == 2 and stat.S_ISREG(st.mode)
    assert (await runtime.stat("link")).is_symlink
    assert not (await runtime.stat("nope")).exists
    # `link/..` climbs from the link's target, as the kernel does; resolve() is lexical.
    assert await runtime.realpath("link/../x") == str(tmp_path / "x")
    assert runtime.resolve("link/../x") == str(ws / "x")
