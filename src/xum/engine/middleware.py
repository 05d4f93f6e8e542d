"""Extension points the engine offers to the layers above it.

The engine (L4) never imports workspaces (L5). What it needs from higher up arrives as an
implementation of one of these protocols: tool-call middleware (hooks, trust, secret masking)
and the sub-agent host (the workspaces layer makes each child a workspace).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from xum.tools.tasking import SubAgentError, SubAgentHost

if TYPE_CHECKING:
    from xum.tools.base import ToolContext, ToolResult


@dataclass(slots=True)
class ToolCall:
    """A tool call as the model made it."""

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


# The sub-agent host is defined where the task tools can see it (tools, L2) and re-exported
# here: the engine hands it to tools through ToolContext.subagents, and the workspaces layer
# implements it (xum.workspaces.subagents), one host per session, scoped to its nesting depth.
# Its records (PatchOutcome, TaskSpec, TaskView) are in xum.tools.tasking, imported on first
# use.
__all__ = [
    "SubAgentError",
    "SubAgentHost",
    "ToolCall",
    "ToolMiddleware",
]
