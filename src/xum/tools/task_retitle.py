"""task_retitle: rename a sub-agent without changing its identity."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError


class TaskRetitleInput(ToolInput):
    task_id: str = Field(description="The sub-agent's id.")
    title: str = Field(description="A short reusable role name, such as 'Reviewer'.")


class TaskRetitleTool(Tool):
    name = "task_retitle"
    description = "Give one of your sub-agents a new title; its id, workspace and context stay."
    Input: ClassVar[type[ToolInput]] = TaskRetitleInput
    read_only = False

    async def run(self, args: TaskRetitleInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return error("sub-agents are not available in this session")
        title = " ".join(args.title.split())
        if not title:
            return error("the title is empty")
        try:
            ctx.subagents.retitle(args.task_id.strip(), title)
        except SubAgentError as exc:
            return error(str(exc))
        return ToolResult(
            output=f"{args.task_id} is now titled {title!r}.",
            meta={"task_id": args.task_id, "title": title},
        )
