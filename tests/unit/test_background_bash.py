"""Background bash: real processes started through the bash tool, read with task_await, listed
with task_list, stopped with task_stop; bounded memory for chatty processes; nothing survives
closing the session's process table."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from tests.support.tools import make_ctx, process_gone
from xum.tools.background import BackgroundProcesses, OutputRing
from xum.tools.bash import BashInput, BashTool
from xum.tools.task_await import TaskAwaitInput, TaskAwaitTool
from xum.tools.task_list import TaskListInput, TaskListTool
from xum.tools.task_stop import TaskStopInput, TaskStopTool


def bg(script: str, lifetime: float | None = None) -> BashInput:
    return BashInput(
        script=script, display_name="bg", timeout_secs=lifetime, run_in_background=True
    )


def awaiting(*ids: str, timeout: float = 20.0, min_completed: int | None = None) -> TaskAwaitInput:
    return TaskAwaitInput(task_ids=list(ids), min_completed=min_completed, timeout_secs=timeout)


async def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.01)
    return path.read_text().strip()


async def test_start_read_partial_output_then_stop_kills_the_group(tmp_path: Path) -> None:
    procs = BackgroundProcesses(str(tmp_path / "scratch"))
    ctx = make_ctx(tmp_path, background=procs)
    pids = tmp_path / "pids"
    release = tmp_path / "release"  # "second" is printed only once the test has read "first"
    script = (
        f"sleep 300 & echo $$ $! > {pids}; echo first; "
        f"while [ ! -e {release} ]; do sleep 0.01; done; echo second; wait"
    )
    started = await BashTool().run(bg(script), ctx)
    assert not started.is_error, started.output
    task_id = started.meta["taskId"]
    assert task_id.startswith("bash:")
    shell_pid, sleeper_pid = (int(p) for p in (await wait_for_file(pids)).split())

    first = await TaskAwaitTool().run(awaiting(task_id), ctx)
    assert "first" in first.output and "second" not in first.output
    assert first.meta["tasks"][0]["status"] == "running"
    release.touch()
    second = await TaskAwaitTool().run(awaiting(task_id), ctx)
    assert "second" in second.output and "first" not in second.output  # only what is new

    listed = await TaskListTool().run(TaskListInput(statuses=None), ctx)
    assert task_id in listed.output

    stopped = await TaskStopTool().run(TaskStopInput(task_ids=[task_id]), ctx)
    assert "stopped" in stopped.output
    assert process_gone(shell_pid) and process_gone(sleeper_pid)
    after = await TaskAwaitTool().run(awaiting(task_id, timeout=0), ctx)
    assert after.meta["tasks"][0]["status"] == "stopped"
    assert task_id not in (await TaskListTool().run(TaskListInput(statuses=None), ctx)).output


async def test_exit_status_arrives_with_the_last_output(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, background=BackgroundProcesses(str(tmp_path / "scratch")))
    started = await BashTool().run(bg("echo done; exit 3"), ctx)
    result = await TaskAwaitTool().run(awaiting(started.meta["taskId"]), ctx)
    # The first wake may be the output alone; the exit follows at once.
    if result.meta["tasks"][0]["status"] == "running":
        result = await TaskAwaitTool().run(awaiting(started.meta["taskId"]), ctx)
    meta = result.meta["tasks"][0]
    assert meta["status"] == "exited" and meta["exit_code"] == 3
    assert 'exit_code="3"' in result.output


async def test_lifetime_limit_kills_it(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, background=BackgroundProcesses(str(tmp_path / "scratch")))
    started = await BashTool().run(bg("sleep 30", lifetime=0.3), ctx)
    task_id = started.meta["taskId"]
    result = await TaskAwaitTool().run(awaiting(task_id, timeout=10), ctx)
    assert result.meta["tasks"][0]["status"] == "timed_out"


async def test_await_with_zero_timeout_does_not_wait(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, background=BackgroundProcesses(str(tmp_path / "scratch")))
    started = await BashTool().run(bg("sleep 300"), ctx)
    result = await TaskAwaitTool().run(awaiting(started.meta["taskId"], timeout=0), ctx)
    # It checked and came back: the wait it used was 0 s (not the default), and it returned
    # while the process was still running.
    assert "timed out after 0 s" in result.output
    assert result.meta["timed_out"] and result.meta["tasks"][0]["status"] == "running"
    assert ctx.background is not None
    await ctx.background.close()


async def test_chatty_process_stays_bounded_and_spills_everything(tmp_path: Path) -> None:
    procs = BackgroundProcesses(str(tmp_path / "scratch"), ring_bytes=256 * 1024)
    ctx = make_ctx(tmp_path, background=procs)
    total = 8 * 1024 * 1024
    started = await BashTool().run(bg(f"yes 0123456789abcdef | head -c {total}"), ctx)
    proc = procs.get(started.meta["taskId"])
    assert proc is not None
    while not proc.done:
        assert proc.ring.held <= 256 * 1024 * 5 // 4  # the ring never holds more than its bound
        await asyncio.sleep(0.005)
    result = await TaskAwaitTool().run(awaiting(proc.task_id), ctx)
    meta = result.meta["tasks"][0]
    assert meta["total_bytes"] == total and meta["new_bytes"] == total
    assert meta["missed_bytes"] >= total - 256 * 1024 * 5 // 4
    assert len(result.output) < 40_000  # head + tail of what the ring holds, with markers
    assert "earlier bytes no longer in memory" in result.output
    assert meta["spill_path"] and os.path.getsize(meta["spill_path"]) == total


async def test_close_leaves_no_orphans_and_refuses_new_processes(tmp_path: Path) -> None:
    procs = BackgroundProcesses(str(tmp_path / "scratch"))
    ctx = make_ctx(tmp_path, background=procs)
    pids = tmp_path / "pid"
    await BashTool().run(bg(f"echo $$ > {pids}; exec sleep 300"), ctx)
    pid = int(await wait_for_file(pids))
    await procs.close()
    assert process_gone(pid)
    refused = await BashTool().run(bg("true"), ctx)
    assert refused.is_error and "closing" in refused.output


async def test_without_a_process_table_background_is_refused(tmp_path: Path) -> None:
    result = await BashTool().run(bg("true"), make_ctx(tmp_path))
    assert result.is_error and "not available" in result.output


def test_ring_reports_what_a_slow_reader_missed() -> None:
    ring = OutputRing(capacity=10)
    ring.feed(b"0123456789")
    assert ring.read(0) == (0, b"0123456789")
    ring.feed(b"abcdef")  # 16 bytes > 12.5: trimmed to the last 10
    missed, data = ring.read(0)
    assert (missed, data) == (6, b"6789abcdef")
    assert ring.read(ring.total) == (0, b"")
