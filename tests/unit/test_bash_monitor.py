"""`bash` with `monitor`: which lines and which ends of a real background process wake the
session (the registry's `on_wake`), how lines are gathered over the cooldown, `max_events`,
`wake_on_exit`, explicit stops that wake nobody, and sessions nobody can wake."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.tools import make_ctx
from xum.tools.background import BackgroundProcesses
from xum.tools.base import ToolContext
from xum.tools.bash import BashInput, BashMonitor, BashTool
from xum.tools.bash_background_terminate import (
    BashBackgroundTerminateInput,
    BashBackgroundTerminateTool,
)
from xum.tools.bgmonitor import BackgroundWake, parse_monitor


class Wakes:
    def __init__(self) -> None:
        self.got: list[BackgroundWake] = []
        self.changed = asyncio.Event()

    def __call__(self, wake: BackgroundWake) -> None:
        self.got.append(wake)
        self.changed.set()

    async def until(self, count: int) -> list[BackgroundWake]:
        async with asyncio.timeout(30):
            while len(self.got) < count:
                self.changed.clear()
                await self.changed.wait()
        return self.got


def watched(tmp_path: Path) -> tuple[ToolContext, BackgroundProcesses, Wakes]:
    procs = BackgroundProcesses(str(tmp_path / "scratch"))
    wakes = Wakes()
    procs.on_wake = wakes
    return make_ctx(tmp_path, background=procs), procs, wakes


async def start(ctx: ToolContext, script: str, monitor: BashMonitor, **more: float) -> str:
    args = BashInput(
        script=script,
        display_name="watched",
        run_in_background=True,
        monitor=monitor,
        timeout_secs=more.get("lifetime"),
    )
    result = await BashTool().run(args, ctx)
    assert not result.is_error, result.output
    assert result.meta["monitored"], result.output
    pid: str = result.meta["backgroundProcessId"]
    return pid


async def ended(procs: BackgroundProcesses, pid: str) -> None:
    proc = procs.get(pid)
    assert proc is not None and proc.task is not None
    await asyncio.wait({proc.task}, timeout=30)  # it may end cancelled (a stop)
    assert proc.done


async def test_lines_in_the_cooldown_make_one_wake_with_the_end(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    gate = tmp_path / "gate"
    script = (
        "echo 'FAIL one'; echo fine; echo 'FAIL two'; echo 'FAIL three'; "
        f"while [ ! -e {gate} ]; do sleep 0.01; done; exit 2"
    )
    # A cooldown far longer than the test: the lines can only leave with the end.
    pid = await start(ctx, script, BashMonitor(filter="^FAIL", cooldown_ms=600_000))
    proc = procs.get(pid)
    assert proc is not None
    while proc.ring.total < len("FAIL one\nfine\nFAIL two\nFAIL three\n"):
        await asyncio.sleep(0.01)
    assert wakes.got == []
    gate.touch()
    (wake,) = await wakes.until(1)
    assert wake.reason == "exit" and wake.status == "exited" and wake.exit_code == 2
    assert wake.lines == ("FAIL one", "FAIL two", "FAIL three")
    assert wake.task_id == f"bash:{pid}" and wake.display_name == "watched"
    text = wake.message()
    assert "has ended" in text and "FAIL two" in text and f'"{pid}"' in text


async def test_a_matching_line_wakes_while_it_runs_and_a_stop_wakes_nobody(
    tmp_path: Path,
) -> None:
    ctx, procs, wakes = watched(tmp_path)
    pid = await start(
        ctx,
        "echo ready; echo 'server listening'; sleep 300",
        BashMonitor(filter="listening", cooldown_ms=0),
    )
    (wake,) = await wakes.until(1)
    assert wake.reason == "output" and wake.lines == ("server listening",)
    assert wake.status == "running" and not wake.retired
    await BashBackgroundTerminateTool().run(BashBackgroundTerminateInput(process_id=pid), ctx)
    await ended(procs, pid)
    assert len(wakes.got) == 1  # the explicit stop made no end wake


async def test_max_events_retires_the_monitor_and_its_end_wakes_nobody(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    gate = tmp_path / "gate"
    script = f"echo 'E 1'; echo 'E 2'; while [ ! -e {gate} ]; do sleep 0.01; done; echo 'E 3'"
    pid = await start(ctx, script, BashMonitor(filter="^E", max_events=2, cooldown_ms=600_000))
    (wake,) = await wakes.until(1)  # delivered at once when retiring, not after the cooldown
    assert wake.retired and wake.lines == ("E 1", "E 2") and wake.reason == "output"
    assert "no longer watches" in wake.message()
    gate.touch()
    await ended(procs, pid)
    assert len(wakes.got) == 1


async def test_exclude_wakes_for_lines_that_do_not_match(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    script = "echo 'progress 1'; echo 'progress 2'; echo 'Error: boom'; echo 'progress 3'"
    pid = await start(ctx, script, BashMonitor(filter="^progress", filter_exclude=True))
    await ended(procs, pid)
    (wake,) = await wakes.until(1)
    assert wake.lines == ("Error: boom",) and wake.reason == "exit"


async def test_without_wake_on_exit_a_quiet_end_wakes_nobody(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    pid = await start(ctx, "echo nothing to see", BashMonitor(filter="FAIL", wake_on_exit=False))
    await ended(procs, pid)
    assert wakes.got == []


async def test_an_exit_alone_wakes_by_default_and_the_lifetime_counts(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    pid = await start(ctx, "sleep 300", BashMonitor(), lifetime=0.2)
    await ended(procs, pid)
    (wake,) = await wakes.until(1)
    assert wake.reason == "exit" and wake.status == "timed_out" and wake.lines == ()


async def test_closing_the_session_wakes_nobody(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    await start(ctx, "echo started; sleep 300", BashMonitor(filter="never"))
    await procs.close()
    assert wakes.got == []


async def test_a_session_nobody_wakes_starts_it_unmonitored_and_says_so(tmp_path: Path) -> None:
    procs = BackgroundProcesses(str(tmp_path / "scratch"))
    ctx = make_ctx(tmp_path, background=procs)
    args = BashInput(
        script="sleep 300", display_name="x", run_in_background=True, monitor=BashMonitor()
    )
    result = await BashTool().run(args, ctx)
    assert not result.is_error and not result.meta["monitored"]
    assert "monitor ignored" in result.output
    await procs.close()


async def test_monitor_needs_the_background(tmp_path: Path) -> None:
    ctx, _procs, _wakes = watched(tmp_path)
    args = BashInput(script="true", display_name="x", monitor=BashMonitor(filter="x"))
    result = await BashTool().run(args, ctx)
    assert result.is_error and "run_in_background" in result.output


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"filter_text": None, "exclude": True}, "needs monitor.filter"),
        ({"filter_text": "(", "exclude": None}, "not a valid regular expression"),
        ({"filter_text": None, "exclude": None, "wake_on_exit": False}, "never wake"),
    ],
)
def test_monitors_that_cannot_work_are_refused(arguments: dict[str, object], problem: str) -> None:
    full: dict[str, object] = {
        "filter_text": None,
        "exclude": None,
        "cooldown_ms": None,
        "max_events": None,
        "wake_on_exit": None,
    }
    full.update(arguments)
    with pytest.raises(ValueError, match=problem):
        parse_monitor(**full)  # type: ignore[arg-type]


async def test_a_long_line_is_kept_bounded(tmp_path: Path) -> None:
    ctx, procs, wakes = watched(tmp_path)
    script = "head -c 100000 /dev/zero | tr '\\0' x; echo ' FAIL'"
    pid = await start(ctx, script, BashMonitor(filter="x"))
    await ended(procs, pid)
    (wake,) = await wakes.until(1)
    (line,) = wake.lines
    assert len(line) < 600 and line.endswith("[...]")
