"""task_remove: delete finished sub-agents and their workspaces."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError


class TaskRemoveInput(ToolInput):
    task_ids: list[str] = Field(description="Inactive sub-agent ids to remove.")


class TaskRemoveTool(Tool):
    name = "task_remove"
    description = (
        "Permanently delete inactive sub-agents: their workspace, branch, worktree and session. "
        "Bring in any commits you want first (task_apply_git_patch). Running ones are refused: "
        "stop them first with task_stop."
    )
    Input: ClassVar[type[ToolInput]] = TaskRemoveInput
    read_only = False
    risk = "write"

    async def run(self, args: TaskRemoveInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return error("sub-agents are not available in this session")
        ids = list(dict.fromkeys(i.strip() for i in args.task_ids if i.strip()))
        if not ids:
            return error("task_ids is empty")
        try:
            removed = await ctx.subagents.remove(ids)
        except SubAgentError as exc:
            return error(str(exc))
        return ToolResult(output=f"Removed {', '.join(removed)}.", meta={"removed": removed})
