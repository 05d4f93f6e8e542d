"""task_send_message: steer a running sub-agent, or wake a finished one with a new turn."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError, is_bash_task


class TaskSendMessageInput(ToolInput):
    task_id: str = Field(description="A sub-agent id returned by task (task_list shows them).")
    message: str = Field(description="Plain text for the sub-agent.")
    queue_dispatch_mode: Literal["tool-end", "turn-end"] | None = Field(
        default=None,
        description=(
            "When the sub-agent is busy: `tool-end` (default) delivers the message once its "
            "current tool calls finish; `turn-end` after its current turn, as a new turn."
        ),
    )


class TaskSendMessageTool(Tool):
    name = "task_send_message"
    description = (
        "Send a message to one of your sub-agents. A running sub-agent gets it after its "
        "current step (or its current turn); a finished one is woken with it as a new turn, "
        "keeping its workspace and context. Await the answer with task_await."
    )
    Input: ClassVar[type[ToolInput]] = TaskSendMessageInput
    read_only = False
    risk = "execute"

    def summary(self, args: TaskSendMessageInput) -> str:
        return args.task_id

    async def run(self, args: TaskSendMessageInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return error("sub-agents are not available in this session")
        if is_bash_task(args.task_id):
            return error("background processes have no stdin; messages go to sub-agents only")
        if not args.message.strip():
            return error("the message is empty")
        try:
            outcome = await ctx.subagents.send_message(
                args.task_id.strip(),
                args.message,
                dispatch=args.queue_dispatch_mode or "tool-end",
            )
        except SubAgentError as exc:
            return error(str(exc))
        return ToolResult(output=outcome, meta={"task_id": args.task_id})
