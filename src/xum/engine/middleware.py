"""Extension points the engine offers to the layers above it.

The engine (L4) never imports workspaces (L5). What it needs from higher up arrives as an
implementation of one of these protocols: tool-call middleware (hooks, trust, secret masking)
and the sub-agent host (the workspaces layer makes each child a workspace).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from xum.tools.base import ToolContext, ToolResult


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text from the model


class ToolMiddleware(Protocol):
    async def before_tool(self, call: ToolCall, ctx: ToolContext) -> ToolResult | None:
        """Return a result to block the call (it is not run); None lets it run."""
        ...

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """Inspect or transform the result (append hook output, mask secrets, ...)."""
        ...


@dataclass(slots=True)
class SubAgentSpec:
    agent_id: str
    title: str
    prompt: str
    model: str | None = None
    thinking: str | None = None
    run_in_background: bool = False
    options: dict[str, Any] | None = None


@dataclass(slots=True)
class SubAgentStatus:
    task_id: str
    status: str  # queued | running | awaiting_report | reported | interrupted | failed
    report: str | None = None
    header: dict[str, Any] | None = None  # status, end reason, turns, tokens, cost, elapsed


class SubAgentHost(Protocol):
    """Spawns and manages child agents. Implemented by the workspaces layer."""

    async def spawn(self, parent_workspace_id: str, spec: SubAgentSpec) -> str: ...

    async def wait(
        self, task_ids: list[str], *, min_completed: int, timeout_s: float
    ) -> list[SubAgentStatus]: ...

    async def send_message(self, task_id: str, message: str) -> None: ...

    async def stop(self, task_ids: list[str]) -> list[SubAgentStatus]: ...
