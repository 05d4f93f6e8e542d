"""An MCP server for the progress and permission tests, written with the `mcp` SDK.

Run as `python tests/mcp/hinted_server.py` (stdio). Its tools:

* `steps(count)` reports progress `count` times (`ctx.report_progress`, with a total and a
  message). After the first report it waits until the file `go` appears in `MCP_TEST_DIR`
  (bounded), so a test can see that first report arrive while the call still runs;
* `lookup(key)`, annotated `readOnlyHint: true` (and a title);
* `mutate(key)`, with no annotations: it leaves `mutated-<key>` in `MCP_TEST_DIR`, so a test
  can tell whether it ran.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

GO_TIMEOUT_S = 60.0


def _dir() -> Path:
    return Path(os.environ.get("MCP_TEST_DIR", "."))


def build() -> MCPServer:
    server: MCPServer = MCPServer("xum-hinted", log_level="CRITICAL")

    @server.tool()
    async def steps(count: int, ctx: Context) -> str:  # type: ignore[type-arg]
        """Report progress `count` times, then answer 'finished'."""
        for i in range(count):
            await ctx.report_progress(i + 1, count, f"step {i + 1} of {count}")
            if i == 0:
                deadline = time.monotonic() + GO_TIMEOUT_S
                while not (_dir() / "go").exists() and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
        return "finished"

    @server.tool(annotations=ToolAnnotations(title="Look up", read_only_hint=True))
    def lookup(key: str) -> str:
        """Read the value of a key."""
        return f"value of {key}"

    @server.tool()
    def mutate(key: str) -> str:
        """Change the value of a key."""
        (_dir() / f"mutated-{key}").write_text("yes")
        return "mutated"

    return server


if __name__ == "__main__":
    build().run("stdio")
