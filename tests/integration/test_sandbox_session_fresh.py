"""A new workspace (no `.xum` directory yet) keeps one session sandbox from its first command:
the empty `.xum` the sandbox holds read-only is there before the first bwrap starts, so the
second command sees the same boundaries and is not given a new sandbox. Inside, `.xum` stays
read-only.

Through the real middleware, bash tool and bubblewrap, like tests/integration/test_sandbox_session.py.
"""

from __future__ import annotations

import time
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


async def bash(ctx: ToolContext, middleware: SandboxMiddleware, script: str) -> ToolResult:
    arguments = orjson.dumps({"script": script, "display_name": "test"}).decode()
    call = ToolCall(id=f"c{time.monotonic_ns()}", name="bash", arguments=arguments)
    return await run_one(call, ctx, ["bash"], [middleware])


async def test_a_new_workspace_keeps_its_first_sandbox(tmp_path: Path) -> None:
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_bytes(orjson.dumps({"sandbox": {"mode": "workspace-write"}}))
    workspace = make_repo(tmp_path / "repo")
    assert not (workspace / ".xum").exists()
    scratch = root / "scratch" / "ws1"
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
    try:
        first = await bash(ctx, middleware, "readlink /proc/self/ns/mnt")
        box = middleware.session_sandbox
        pid = None if box is None else box.pid
        second = await bash(ctx, middleware, "readlink /proc/self/ns/mnt; touch .xum/planted")
        assert not first.is_error, first.output
        assert pid is not None
        box = middleware.session_sandbox
        assert box is not None and box.pid == pid  # the same sandbox served both
        assert first.output.split()[0] == second.output.split()[0]  # the same namespace
        # `.xum` is still held read-only: nothing can be planted in it.
        assert second.is_error and "Read-only file system" in second.output
        assert (workspace / ".xum").is_dir() and not any((workspace / ".xum").iterdir())
    finally:
        await middleware.aclose()
