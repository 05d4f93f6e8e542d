"""bash_background_terminate: kill one background process (its whole process group).

An explicit stop: a monitor on the process is disarmed without waking anyone, and what it
printed stays readable with bash_output until the process is forgotten."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.bash_output import find_process, unknown_process
from xum.tools.input import ToolInput


class BashBackgroundTerminateInput(ToolInput):
    process_id: str = Field(
        description=(
            "The background process to terminate: its backgroundProcessId, or its taskId "
            "(`bash:<id>`)."
        )
    )


class BashBackgroundTerminateTool(Tool):
    name = "bash_background_terminate"
    description = (
        "Terminate a background bash process and everything it started (SIGTERM, then SIGKILL "
        "after a grace period). Its monitor, if any, wakes nobody. Its unread output can still "
        "be read with bash_output."
    )
    Input: ClassVar[type[ToolInput]] = BashBackgroundTerminateInput
    read_only = False
    risk = "execute"

    async def run(self, args: BashBackgroundTerminateInput, ctx: ToolContext) -> ToolResult:
        if ctx.background is None:
            return error("background commands are not available in this session")
        proc = find_process(ctx, args.process_id)
        if proc is None:
            return unknown_process(ctx, args.process_id)
        was_running = not proc.done
        await ctx.background.stop(proc)
        unread = proc.ring.total - proc.cursor
        if was_running:
            text = f"Terminated {proc.task_id} ({proc.display_name})."
        else:
            text = f"{proc.task_id} ({proc.display_name}) had already ended: {proc.status}."
            if proc.result is not None and proc.result.exit_code is not None:
                text = text[:-1] + f", exit code {proc.result.exit_code}."
        if unread:
            text += f" {unread:,} unread byte(s) remain; read them with bash_output."
        return ToolResult(
            output=text,
            meta={
                "task_id": proc.task_id,
                "process_id": proc.process_id,
                "status": proc.status,
                "terminated": was_running,
                "unread_bytes": unread,
            },
        )
