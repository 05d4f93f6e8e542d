"""`bash` calls through the real sandbox middleware, the way the engine runs them (`run_one`:
middleware, then the tool), in a real checkout: what the sandbox tests drive."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import orjson

from xum.core.paths import xum_root
from xum.engine import events as E
from xum.engine.extensions import ToolCall
from xum.engine.toolrun import run_one
from xum.runtime.local import LocalRuntime
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces.safety.choice import SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware


def set_sandbox(**section: Any) -> None:
    """Write `$XUM_ROOT/config.json` with this `sandbox` section (and nothing else)."""
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_bytes(orjson.dumps({"sandbox": section}))


@dataclasses.dataclass
class Rig:
    ctx: ToolContext
    workspace: Path
    events: list[E.Event]
    middleware: SandboxMiddleware

    async def bash(self, script: str, **extra: Any) -> ToolResult:
        arguments = orjson.dumps({"script": script, "display_name": "test", **extra}).decode()
        call = ToolCall(id=f"c{time.monotonic_ns()}", name="bash", arguments=arguments)
        return await run_one(call, self.ctx, ["bash"], [self.middleware])


def make_rig(
    workspace: Path, scratch: Path | None = None, choice: SafetyChoice | None = None
) -> Rig:
    """A workspace `ws1` at `workspace` (scratch dir: `$XUM_ROOT/scratch/ws1` unless given).
    Close `rig.middleware` when done: it may hold a session sandbox."""
    scratch = scratch or xum_root() / "scratch" / "ws1"
    scratch.mkdir(parents=True, exist_ok=True)
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
        runtime,
        workspace_id="ws1",
        scratch_dir=scratch,
        emit=events.append,
        choice=choice or SafetyChoice(),
    )
    return Rig(ctx, workspace, events, middleware)
