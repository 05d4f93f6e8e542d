"""Settings → MCP's Test button: start a saved server, list what it offers, stop it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from xum.core.paths import logs_dir
from xum.workspaces.mcp.config import ServerSpec
from xum.workspaces.mcp.manager import START_TIMEOUT_S


async def probe_server(
    spec: ServerSpec,
    *,
    cwd: str,
    env: Mapping[str, str],
    mask: Callable[[str], str] = lambda text: text,
    timeout_s: float = START_TIMEOUT_S,
) -> dict[str, Any]:
    """Start `spec`, list what it offers and stop it (Settings → MCP's Test button):
    {"ok", "tools", "prompts"} or {"ok": false, "error"}."""
    from xum.workspaces.mcp.client import Connection, McpError

    conn = Connection(
        spec,
        cwd=cwd,
        env={**env, **dict(spec.env)},
        mask=mask,
        log_path=logs_dir() / "mcp" / "settings-test.log",
    )
    try:
        await conn.start(timeout_s)
    except McpError as exc:
        return {"ok": False, "error": str(exc)}
    try:
        return {
            "ok": True,
            "tools": [{"name": t.name, "description": t.description} for t in conn.tools],
            "prompts": [p.name for p in conn.prompts],
        }
    finally:
        await conn.close()
