"""A session's MCP, as cheap as nothing until the workspace has an MCP config file.

The assembly gives every session a `SessionMcp`. Before each request the context asks it for a
snapshot: while none of the three config files exists (`xum.workspaces.mcp.paths`) that is
three `stat` calls and None, and nothing else of MCP is imported (`xum run`'s cold start stays
as it was). Once a file appears, even mid-session (hot reload), the real manager
(`xum.workspaces.mcp.manager.McpManager`) is made and everything goes to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from xum.engine.events import EventSink, null_sink
from xum.runtime.base import RuntimeKind
from xum.workspaces.mcp.paths import global_path, local_path, repo_path

if TYPE_CHECKING:
    from xum.tools.mcp_host import (
        McpCallOutcome,
        McpPromptOutcome,
        McpResourceListing,
        McpServerState,
        McpSnapshot,
        McpTool,
        ProgressSink,
    )
    from xum.workspaces.mcp.manager import McpManager


class SessionMcp:
    """Implements `xum.tools.mcp_host.McpHost`; see the module docstring."""

    def __init__(
        self,
        *,
        workspace_id: str,
        workspace_path: str,
        checkout_root: str,
        runtime_kind: RuntimeKind,
        env: Callable[[], Mapping[str, str]],
        mask: Callable[[str], str],
        trusted: Callable[[], bool],
        emit: EventSink = null_sink,
        idle_timeout_s: float | None = None,
        ssh_host: str | None = None,
    ) -> None:
        self._args: dict[str, Any] = {
            "workspace_id": workspace_id,
            "workspace_path": workspace_path,
            "checkout_root": checkout_root,
            "runtime_kind": runtime_kind,
            "env": env,
            "mask": mask,
            "trusted": trusted,
            "emit": emit,
            "ssh_host": ssh_host,
        }
        self._idle_timeout_s = idle_timeout_s
        self._paths = (
            str(global_path()),
            str(repo_path(checkout_root)),
            str(local_path(workspace_path)),
        )
        self.manager: McpManager | None = None

    def _configured(self) -> bool:
        for path in self._paths:
            try:
                os.stat(path)
            except OSError:
                continue
            return True
        return False

    def _made(self) -> McpManager:
        if self.manager is None:
            from xum.workspaces.mcp.manager import (
                ManagerSettings,
                McpManager,
                idle_timeout_from_env,
            )

            idle = self._idle_timeout_s or idle_timeout_from_env()
            settings = ManagerSettings(idle_timeout_s=idle)
            self.manager = McpManager(**self._args, settings=settings)
        return self.manager

    async def snapshot(self) -> McpSnapshot | None:
        if self.manager is None and not self._configured():
            return None
        return await self._made().snapshot()

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        scratch_dir: str,
        progress: ProgressSink | None = None,
    ) -> McpCallOutcome:
        return await self._made().call_tool(
            name, arguments, scratch_dir=scratch_dir, progress=progress
        )

    def tool(self, name: str) -> McpTool | None:
        return self.manager.tool(name) if self.manager is not None else None

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> McpPromptOutcome:
        return await self._made().get_prompt(name, arguments)

    async def list_resources(self, server: str | None = None) -> McpResourceListing:
        if self.manager is None and not self._configured():
            from xum.tools.mcp_host import McpResourceListing

            return McpResourceListing()
        manager = self._made()
        await manager.snapshot()  # reads the config and starts the servers (lazy start)
        return await manager.list_resources(server)

    async def read_resource(
        self, server: str, uri: str, *, scratch_dir: str | None
    ) -> McpCallOutcome:
        manager = self._made()
        await manager.snapshot()
        return await manager.read_resource(server, uri, scratch_dir=scratch_dir)

    def states(self) -> list[McpServerState]:
        return self.manager.states() if self.manager is not None else []

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()
