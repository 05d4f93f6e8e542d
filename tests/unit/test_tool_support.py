"""Shared helpers for the tool and runtime tests (no tests here)."""

from __future__ import annotations

import contextlib
import os
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


def kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)
