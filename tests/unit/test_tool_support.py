"""Shared helpers for the tool and runtime tests (no tests here)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from xum.runtime.local import LocalRuntime
from xum.tools.base import ToolContext


def make_ctx(tmp_path: Path, **overrides: object) -> ToolContext:
    """A real local runtime on `<tmp>/ws`, with scratch and temp dirs beside it."""
    workspace = tmp_path / "ws"
    scratch = tmp_path / "scratch"
    temp = tmp_path / "tmp"
    for directory in (workspace, scratch, temp):
        directory.mkdir(exist_ok=True)
    ctx = ToolContext(
        runtime=LocalRuntime(str(workspace), str(temp)),
        workspace_id="abc123",
        workspace_name="ws-test",
        project_path=str(workspace),
        scratch_dir=str(scratch),
        env={"XUM_WORKSPACE_NAME": "ws-test", "XUM_SCRATCH_DIR": str(scratch)},
    )
    for key, value in overrides.items():
        setattr(ctx, key, value)
    return ctx


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


async def wait_gone(*pids: int, timeout: float = 20.0) -> bool:
    """Poll until none of `pids` runs any more (True), or `timeout` seconds pass (False): a
    killed process may take a moment to be reaped."""
    deadline = time.monotonic() + timeout
    while not all(process_gone(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)
