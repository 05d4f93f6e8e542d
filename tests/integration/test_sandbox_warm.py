"""The session sandbox starts with the session's turn, ahead of its first command
(`SandboxMiddleware.warm`): the first command then runs in the sandbox already started, not in a
new one, and a session whose settings keep commands out of the sandbox starts none.

Through the real middleware, bash tool and bubblewrap, like tests/integration/test_sandbox_session.py.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from tests.gitrepo import make_repo
from xum.core.paths import xum_root
from xum.engine import events as E
from xum.engine.extensions import ToolCall
from xum.engine.toolrun import run_one
from xum.runtime.local import LocalRuntime
from xum.runtime.sandbox import local_backend
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces.safety.choice import SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)


@dataclass
class Parts:
    ctx: ToolContext
    workspace: Path
    middleware: SandboxMiddleware
    events: list[E.Event]


def set_mode(mode: str) -> None:
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_bytes(orjson.dumps({"sandbox": {"mode": mode}}))


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[Parts]:
    # A new workspace: no `.xum` yet (warming makes the held mount point, as a command does).
    workspace = make_repo(tmp_path / "repo")
    scratch = xum_root() / "scratch" / "ws1"
    scratch.mkdir(parents=True)
    events: list[E.Event] = []
    runtime = LocalRuntime(str(workspace))
    ctx = ToolContext(
        call_id="",
        runtime=runtime,
        workspace_id="ws1",
        workspace_name="ws",
        project_path=str(workspace),
        scratch_dir=str(scratch),
        env={"XUM_SCRATCH_DIR": str(scratch)},
    )
    middleware = SandboxMiddleware(
        runtime, workspace_id="ws1", scratch_dir=scratch, emit=events.append, choice=SafetyChoice()
    )
    yield Parts(ctx, workspace, middleware, events)
    await middleware.aclose()


async def bash(parts: Parts, script: str) -> ToolResult:
    arguments = orjson.dumps({"script": script, "display_name": "test"}).decode()
    call = ToolCall(id=f"c{time.monotonic_ns()}", name="bash", arguments=arguments)
    return await run_one(call, parts.ctx, ["bash"], [parts.middleware])


async def test_the_first_command_runs_in_the_sandbox_started_ahead_of_it(parts: Parts) -> None:
    set_mode("workspace-write")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    box = parts.middleware.session_sandbox
    assert box is not None and box.pid is not None  # running before any command
    started = box.pid
    assert parts.middleware.warm(parts.ctx) is task  # once per session
    first = await bash(parts, "readlink /proc/self/ns/mnt")
    assert not first.is_error, first.output
    assert box.pid == started  # the command took the sandbox started for it
    # Still the sandbox's boundaries: `.xum` is held read-only, the workspace is writable.
    second = await bash(parts, "touch written && touch .xum/planted")
    assert second.is_error and "Read-only file system" in second.output
    assert (parts.workspace / "written").exists()
    assert box.pid == started
    assert not [e for e in parts.events if isinstance(e, E.Advisory)]


async def test_no_sandbox_starts_when_commands_run_without_one(parts: Parts) -> None:
    set_mode("off")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    assert parts.middleware.session_sandbox is None
    result = await bash(parts, "echo plain")
    assert not result.is_error and parts.middleware.session_sandbox is None


async def test_a_sandbox_started_ahead_ends_with_the_session(parts: Parts) -> None:
    set_mode("workspace-write")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    box = parts.middleware.session_sandbox
    assert box is not None and box.pid is not None
    await parts.middleware.aclose()
    assert box.pid is None
