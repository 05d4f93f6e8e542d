"""task_stop: interrupt sub-agents and kill background processes."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError, is_bash_task


class TaskStopInput(ToolInput):
    task_ids: list[str] = Field(
        description="Sub-agent ids, or background process ids (`bash:<id>`), to stop."
    )


class TaskStopTool(Tool):
    name = "task_stop"
    description = (
        "Stop sub-agents (their turn is interrupted, their commands and background processes "
        "are killed; they become `interrupted` and keep their workspace, so task_send_message "
        "can wake them again) or background bash processes (the whole process group is killed)."
    )
    Input: ClassVar[type[ToolInput]] = TaskStopInput
    read_only = False
    risk = "execute"

    async def run(self, args: TaskStopInput, ctx: ToolContext) -> ToolResult:
        ids = list(dict.fromkeys(i.strip() for i in args.task_ids if i.strip()))
        if not ids:
            return error("task_ids is empty")
        lines: list[str] = []
        metas: list[dict[str, Any]] = []
        problems: list[str] = []
        children: list[str] = []
        for task_id in ids:
            if not is_bash_task(task_id):
                children.append(task_id)
                continue
            proc = ctx.background.get(task_id) if ctx.background else None
            if proc is None:
                problems.append(f"{task_id}: no such background process")
                continue
            was_running = not proc.done
            if ctx.background is not None:
                await ctx.background.stop(proc)
            lines.append(
                f"{task_id}: {'stopped' if was_running else 'had already ended'} ({proc.status})"
            )
            metas.append({"task_id": task_id, "kind": "bash", "status": proc.status})
        if children:
            if ctx.subagents is None:
                problems.extend(f"{i}: unknown task id" for i in children)
            else:
                try:
                    views = await ctx.subagents.stop(children)
                except SubAgentError as exc:
                    problems.append(str(exc))
                    views = []
                for view in views:
                    lines.append(f"{view.task_id}: {view.status}")
                    metas.append(
                        {"task_id": view.task_id, "kind": "subagent", "status": view.status}
                    )
        output = "\n".join(lines + problems)
        return ToolResult(
            output=output, is_error=bool(problems) and not lines, meta={"tasks": metas}
        )
