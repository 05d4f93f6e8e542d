"""Shared helpers for the tool and runtime tests (no tests here)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from xum.runtime.local import LocalRuntime
from xum.tools.base import OutputStream, ToolContext


class RecordedStream:
    """A live output stream that keeps what it was given (an `OutputStream`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data = bytearray()
        self.writes = 0
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, f"{self.name} written after close"
        self.data += data
        self.writes += 1

    def close(self) -> None:
        self.closed = True


class Streams:
    """A recording `OutputOpener`: every stream opened, in order."""

    def __init__(self) -> None:
        self.opened: list[RecordedStream] = []

    def __call__(self, name: str) -> OutputStream:
        stream = RecordedStream(name)
        self.opened.append(stream)
        return stream

    def named(self, name: str) -> bytes:
        return b"".join(bytes(s.data) for s in self.opened if s.name == name)

    def everything(self) -> bytes:
        return b"".join(bytes(s.data) for s in self.opened)


def make_ctx(tmp_path: Path, **overrides: Any) -> ToolContext:
    """A real local runtime on `<tmp>/ws`, with scratch and temp dirs beside it."""
    workspace = tmp_path / "ws"
    scratch = tmp_path / "scratch"
    temp = tmp_path / "tmp"
    for directory in (workspace, scratch, temp):
        directory.mkdir(exist_ok=True)
    ctx = ToolContext(
        call_id="call_test",
        runtime=LocalRuntime(str(workspace), str(temp)),
        workspace_id="abc123",
        workspace_name="ws-test",
        project_path=str(workspace),
        scratch_dir=str(scratch),
        env={"XUM_WORKSPACE_NAME": "ws-test", "XUM_SCRATCH_DIR": str(scratch)},
    )
    return dataclasses.replace(ctx, **overrides) if overrides else ctx


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone before the open, or between the open and the read (ESRCH)
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


def running_with(tag: str) -> list[int]:
    """Pids whose command line contains `tag` (not zombies). Inside the sandbox a command's `$$`
    is a PID of its own namespace, so tests find its processes by what they run instead."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in cmdline and not process_gone(int(name)):
            found.append(int(name))
    return found


async def wait_none_running(tag: str, timeout: float = 20.0) -> list[int]:
    """Poll until no process runs `tag` (returns []), or `timeout` passes (returns the pids)."""
    deadline = time.monotonic() + timeout
    while (left := running_with(tag)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return left
