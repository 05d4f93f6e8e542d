"""MCP: what xum adds to a tool call, and what MCP support costs a session without servers.

- round trip: the test server's `echo` called N times with the SDK's own `ClientSession` (the
  baseline) and, interleaved with it, through xum's path (the registry's dispatch, the
  session's `McpManager`, the content flattening and the output bounding) to another process of
  the same server; the figure is the difference of the medians (aim: under 2 ms);
- no config: one `McpManager.snapshot()` when no MCP file exists (what every request pays), and
  the import time of the modules the session opens with (`xum run`'s cold start otherwise
  loads nothing of MCP: tests/e2e/test_run_startup.py holds that).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import median_ms

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "server.py"
CALLS = 300


async def _round_trips(scratch: str) -> tuple[list[float], list[float], list[float]]:
    """(SDK samples, xum samples, xum's own time in each of its calls), the two calls
    interleaved so that the machine's noise falls on both alike."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from xum.llm.types import ToolSpec
    from xum.runtime.local import LocalRuntime
    from xum.tools.base import ToolContext
    from xum.tools.mcp_host import McpAccess
    from xum.tools.registry import validate_and_run
    from xum.workspaces.mcp.manager import McpManager
    from xum.workspaces.mcp.paths import global_path

    global_path().parent.mkdir(parents=True, exist_ok=True)
    global_path().write_text(f'{{"servers": {{"b": "{sys.executable} {SERVER}"}}}}')
    manager = McpManager(
        workspace_id="bench",
        workspace_path=scratch,
        checkout_root=scratch,
        runtime_kind="local",
        env=lambda: dict(os.environ),
        mask=lambda text: text,
        trusted=lambda: True,
    )
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    # The SDK call inside xum's path is timed too: total minus it is xum's own work.
    from xum.workspaces.mcp.client import Connection

    inner: list[float] = []
    sdk_call = Connection.call_tool

    async def timed(self: Connection, tool: str, arguments: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await sdk_call(self, tool, arguments)
        finally:
            inner.append(time.perf_counter() - t0)

    Connection.call_tool = timed  # type: ignore[method-assign]
    try:
        snapshot = await manager.snapshot()
        assert snapshot is not None
        name = "mcp__b__echo"
        ctx = ToolContext(
            call_id="bench",
            runtime=LocalRuntime(scratch, scratch),
            workspace_id="bench",
            workspace_name="bench",
            project_path=scratch,
            scratch_dir=scratch,
            env={},
            mcp=McpAccess(
                host=manager,
                catalog=tuple(
                    ToolSpec(t.name, t.description, t.parameters) for t in snapshot.tools
                ),
                offered=frozenset({name}),
            ),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            bare: list[float] = []
            xum: list[float] = []
            for i in range(CALLS + 20):
                t0 = time.perf_counter()
                await session.call_tool("echo", {"text": f"call {i}"})
                t1 = time.perf_counter()
                result = await validate_and_run(
                    name, f'{{"text": "call {i}"}}', ctx, available=[name]
                )
                t2 = time.perf_counter()
                assert not result.is_error, result.output
                if i >= 20:  # the first calls warm both paths up
                    bare.append(t1 - t0)
                    xum.append(t2 - t1)
            own = [x - i for x, i in zip(xum, inner[-len(xum) :], strict=True)]
            return bare, xum, own
    finally:
        Connection.call_tool = sdk_call  # type: ignore[method-assign]
        await manager.aclose()


async def _empty_snapshot(scratch: str) -> list[float]:
    """What a request pays for MCP support in a workspace with no MCP config file."""
    from xum.workspaces.mcp.lazy import SessionMcp
    from xum.workspaces.mcp.paths import global_path

    global_path().unlink(missing_ok=True)
    manager = SessionMcp(
        workspace_id="bench-empty",
        workspace_path=scratch,
        checkout_root=scratch,
        runtime_kind="local",
        env=dict,
        mask=lambda text: text,
        trusted=lambda: True,
    )
    samples = []
    for _ in range(2000):
        t0 = time.perf_counter()
        await manager.snapshot()
        samples.append(time.perf_counter() - t0)
    return samples


def _startup_import_ms() -> float:
    """Import time of the MCP modules every session loads (over the engine, loaded anyway)."""
    code = (
        "import time, xum.engine.agent, xum.context.workspace;"
        "t=time.perf_counter(); import xum.workspaces.mcp.lazy;"
        "print(time.perf_counter()-t)"
    )
    samples = []
    for _ in range(7):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        samples.append(float(out.stdout))
    return median_ms(samples)


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XUM_ROOT"] = str(Path(tmp) / "root")
        bare, xum, own = asyncio.run(_round_trips(tmp))
        empty = asyncio.run(_empty_snapshot(tmp))
    bare_ms, xum_ms = median_ms(bare), median_ms(xum)
    return {
        "calls": CALLS,
        "sdk_round_trip_ms": bare_ms,
        "xum_round_trip_ms": xum_ms,
        "added_ms": round(xum_ms - bare_ms, 3),
        # xum's own work per call (dispatch, manager, flattening, bounding), measured in-process.
        "xum_own_ms": median_ms(own),
        "aim_added_ms": 2.0,
        "no_config_snapshot_us": round(median_ms(empty) * 1000, 2),
        "session_module_import_ms": _startup_import_ms(),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
