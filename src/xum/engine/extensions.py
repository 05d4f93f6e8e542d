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
    """One layer around every tool call. Layers run in list order, `before_tool` before the
    call and `after_tool` after it, and never change what they are given: a layer says what it
    changes by returning it.

    The context is the call's own and frozen (`ToolContext`); a changed one (made with
    `dataclasses.replace`) is what the later layers, the tool and every `after_tool` see. A
    result is not changed in place either: `after_tool` returns a new one, or the same object
    when it has nothing to add.
    """

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        """A result blocks the call (it is not run, and later layers are skipped); a context
        replaces the call's context from here on; None lets the call go on unchanged."""
        ...

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """The result to pass on (append hook output, mask secrets, ...), without mutating
        `result`. `ctx` is the context the tool ran with."""
        ...


# The sub-agent host is defined where the task tools can see it (tools, L2) and re-exported
# here: the engine hands it to tools through ToolContext.subagents, and the workspaces layer
# implements it (xum.workspaces.subagents.manager), one host per session, scoped to its nesting depth.
# Its records (PatchOutcome, TaskSpec, TaskView) are in xum.tools.tasking, imported on first
# use.
__all__ = [
    "SubAgentError",
    "SubAgentHost",
    "ToolCall",
    "ToolMiddleware",
]
