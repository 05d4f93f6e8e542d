"""todo_read: show the session's task list."""

from __future__ import annotations

from typing import ClassVar

from xum.tools.base import TodoItem, Tool, ToolContext, ToolResult
from xum.tools.input import ToolInput

_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoReadInput(ToolInput):
    pass


def render_todos(todos: list[TodoItem]) -> str:
    return "\n".join(
        f"{i}. {_MARKS[t.status]} {t.content}"
        + (" (in progress)" if t.status == "in_progress" else "")
        for i, t in enumerate(todos, 1)
    )


class TodoReadTool(Tool):
    name = "todo_read"
    description = (
        "Show this session's task list as last written with todo_write: [x] completed, "
        "[~] in progress, [ ] pending."
    )
    Input: ClassVar[type[ToolInput]] = TodoReadInput
    read_only = True

    async def run(self, args: TodoReadInput, ctx: ToolContext) -> ToolResult:
        todos = [{"content": t.content, "status": t.status} for t in ctx.todos]
        if not ctx.todos:
            return ToolResult(output="The task list is empty.", meta={"todos": todos})
        return ToolResult(output=render_todos(ctx.todos), meta={"todos": todos})
