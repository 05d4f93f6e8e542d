"""bash_output and bash_background_terminate on real background processes: new output only,
the line filter (kept, excluded, consumed for good), the bounded wait that excluded lines do
not end, a read at megabytes of output, ids with or without `bash:`, and terminate."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.tools import make_ctx, process_gone
from xum.tools.background import BackgroundProcesses
from xum.tools.base import ToolContext
from xum.tools.bash import BashInput, BashTool
from xum.tools.bash_background_terminate import (
    BashBackgroundTerminateInput,
    BashBackgroundTerminateTool,
)
from xum.tools.bash_output import BashOutputInput, BashOutputTool


def bg(script: str) -> BashInput:
    return BashInput(script=script, display_name="bg", run_in_background=True)


def reading(
    pid: str,
    *,
    filter: str | None = None,
    exclude: bool | None = None,
    timeout: float | None = 20.0,
) -> BashOutputInput:
    return BashOutputInput(
        process_id=pid, filter=filter, filter_exclude=exclude, timeout_secs=timeout
    )


async def start(ctx: ToolContext, script: str) -> str:
    started = await BashTool().run(bg(script), ctx)
    assert not started.is_error, started.output
    assert "bash_output" in started.output
    pid: str = started.meta["backgroundProcessId"]
    return pid


def body(output: str) -> str:
    """What a read shows of the output (between its <bash> tags; notes after it left out)."""
    return output.split("\n", 1)[1].rsplit("</bash>", 1)[0]


def context(tmp_path: Path, ring_bytes: int | None = None) -> ToolContext:
    procs = (
        BackgroundProcesses(str(tmp_path / "scratch"))
        if ring_bytes is None
        else BackgroundProcesses(str(tmp_path / "scratch"), ring_bytes=ring_bytes)
    )
    return make_ctx(tmp_path, background=procs)


async def test_reads_new_output_then_the_exit(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    gate = tmp_path / "gate"
    pid = await start(ctx, f"echo one; while [ ! -e {gate} ]; do sleep 0.01; done; echo two")
    first = await BashOutputTool().run(reading(pid), ctx)
    assert "one" in first.output and first.meta["status"] == "running"
    gate.touch()
    rest = await BashOutputTool().run(reading(f"bash:{pid}"), ctx)  # the taskId works too
    seen = body(rest.output)
    while rest.meta["status"] == "running":  # the output may come a moment before the exit
        rest = await BashOutputTool().run(reading(pid), ctx)
        seen += body(rest.output)
    assert "two" in seen and "one" not in seen
    assert rest.meta["status"] == "exited" and rest.meta["exit_code"] == 0


async def test_filter_keeps_matching_lines_and_discards_the_rest(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    pid = await start(ctx, "printf 'ok 1\\nFAIL a\\nok 2\\nFAIL b\\n'; exit 1")
    got = await BashOutputTool().run(reading(pid, filter="^FAIL"), ctx)
    seen = body(got.output)
    while got.meta["status"] == "running":
        got = await BashOutputTool().run(reading(pid, filter="^FAIL"), ctx)
        seen += body(got.output)
    assert "FAIL a" in seen and "FAIL b" in seen and "ok" not in seen
    # The left-out lines were consumed: an unfiltered read has nothing new.
    again = await BashOutputTool().run(reading(pid, timeout=0), ctx)
    assert "(no new output)" in again.output and "ok" not in again.output


async def test_excluded_lines_do_not_end_the_wait(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    gate = tmp_path / "gate"
    script = (
        "for i in 1 2 3; do echo 'waiting...'; done; "
        f"while [ ! -e {gate} ]; do echo 'waiting...'; sleep 0.01; done; echo 'tests passed'"
        "; sleep 300"
    )
    pid = await start(ctx, script)
    read = asyncio.create_task(
        BashOutputTool().run(reading(pid, filter="waiting", exclude=True, timeout=60), ctx)
    )
    proc = ctx.background.get(pid) if ctx.background else None
    assert proc is not None
    # The progress noise keeps coming (and is consumed), but the read waits for a kept line.
    while proc.ring.total < 20 * len("waiting...\n"):
        await asyncio.sleep(0.01)
    assert not read.done()
    gate.touch()
    result = await asyncio.wait_for(read, 30)
    assert "tests passed" in body(result.output) and "waiting" not in body(result.output)
    assert result.meta["status"] == "running"
    assert ctx.background is not None
    await ctx.background.close()


async def test_an_unfinished_line_waits_for_its_end_under_a_filter(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    gate = tmp_path / "gate"
    script = f"printf 'ERR par'; while [ ! -e {gate} ]; do sleep 0.01; done; printf 'tial\\n'"
    pid = await start(ctx, script)
    proc = ctx.background.get(pid) if ctx.background else None
    assert proc is not None
    while proc.ring.total < 7:
        await asyncio.sleep(0.01)
    early = await BashOutputTool().run(reading(pid, filter="ERR", timeout=0), ctx)
    assert "ERR" not in early.output  # not a complete line yet
    gate.touch()
    late = await BashOutputTool().run(reading(pid, filter="ERR"), ctx)
    assert "ERR partial" in late.output


async def test_a_read_of_many_megabytes_is_bounded(tmp_path: Path) -> None:
    ctx = context(tmp_path, ring_bytes=256 * 1024)
    total = 16 * 1024 * 1024
    pid = await start(ctx, f"yes 'line of output' | head -c {total}; echo; echo 'the end'")
    proc = ctx.background.get(pid) if ctx.background else None
    assert proc is not None
    while not proc.done:
        assert proc.ring.held <= 256 * 1024 * 5 // 4
        await asyncio.sleep(0.01)
    result = await BashOutputTool().run(reading(pid, filter="end$"), ctx)
    assert "the end" in result.output
    assert result.meta["missed_bytes"] >= total - 256 * 1024 * 5 // 4
    assert len(result.output) < 2000


async def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    unknown = await BashOutputTool().run(reading("nope"), ctx)
    assert unknown.is_error and "backgroundProcessId" in unknown.output
    pid = await start(ctx, "sleep 300")
    bad = await BashOutputTool().run(reading(pid, filter="("), ctx)
    assert bad.is_error and "regular expression" in bad.output
    lone = await BashOutputTool().run(reading(pid, exclude=True), ctx)
    assert lone.is_error and "needs filter" in lone.output
    assert ctx.background is not None
    await ctx.background.close()


async def test_terminate_kills_the_group_and_keeps_the_output(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    pids = tmp_path / "pids"
    pid = await start(ctx, f"sleep 300 & echo $$ $! > {pids}; echo hello; wait")
    proc = ctx.background.get(pid) if ctx.background else None
    assert proc is not None
    while not pids.exists() or not pids.read_text().strip() or proc.ring.total < 6:
        await asyncio.sleep(0.01)
    shell, sleeper = (int(p) for p in pids.read_text().split())
    done = await BashBackgroundTerminateTool().run(
        BashBackgroundTerminateInput(process_id=pid), ctx
    )
    assert "Terminated" in done.output and done.meta["status"] == "stopped"
    assert process_gone(shell) and process_gone(sleeper)
    left = await BashOutputTool().run(reading(pid), ctx)
    assert "hello" in left.output and left.meta["status"] == "stopped"
    again = await BashBackgroundTerminateTool().run(
        BashBackgroundTerminateInput(process_id=pid), ctx
    )
    assert "already ended" in again.output


async def test_without_background_support_the_tools_refuse(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await BashOutputTool().run(reading("x"), ctx)
    assert result.is_error and "not available" in result.output
