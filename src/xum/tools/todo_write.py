"""todo_write: replace the session's task list."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from xum.tools.base import TodoItem, TodoStatus, Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.todo_read import render_todos

MAX_TODOS = 100
MAX_CONTENT_CHARS = 1000


class TodoEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(
        description=(
            "The task, worded for its status: imperative when pending ('Add tests'), present "
            "progressive when in_progress ('Adding tests'), past when completed ('Added tests')."
        )
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")


class TodoWriteInput(ToolInput):
    todos: list[TodoEntry] = Field(
        description="The whole list, in order. It replaces the previous list."
    )


class TodoWriteTool(Tool):
    name = "todo_write"
    description = (
        "Replace the task list for this session (the UI shows progress from it). Send the "
        "whole list every time, in order; at most one task may be in_progress. Use it for "
        "work with several steps: write the plan as pending tasks, mark one in_progress as you "
        "start it and completed as soon as it is done. Skip it for one-step requests."
    )
    Input: ClassVar[type[ToolInput]] = TodoWriteInput
    read_only = False

    def summary(self, args: TodoWriteInput) -> str:
        return f"{len(args.todos)} tasks"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolResult:
        if len(args.todos) > MAX_TODOS:
            return error(f"{len(args.todos)} tasks is too many; keep the list to {MAX_TODOS}.")
        problems: list[str] = []
        for index, todo in enumerate(args.todos):
            if not todo.content.strip():
                problems.append(f"todos[{index}].content is empty")
            elif len(todo.content) > MAX_CONTENT_CHARS:
                problems.append(
                    f"todos[{index}].content is {len(todo.content)} characters; "
                    f"keep each task under {MAX_CONTENT_CHARS}"
                )
        active = [i for i, todo in enumerate(args.todos) if todo.status == "in_progress"]
        if len(active) > 1:
            problems.append(
                f"{len(active)} tasks are in_progress (todos{active}); at most one may be. "
                "Finish one first, or keep the others pending."
            )
        if problems:
            return error("The task list was not changed:\n" + "\n".join(f"- {p}" for p in problems))
        ctx.todos[:] = [TodoItem(content=t.content.strip(), status=t.status) for t in args.todos]
        counts = {
            s: sum(1 for t in ctx.todos if t.status == s)
            for s in ("completed", "in_progress", "pending")
        }
        headline = (
            f"Task list updated: {counts['completed']} completed, {counts['in_progress']} in "
            f"progress, {counts['pending']} pending."
        )
        return ToolResult(
            output=f"{headline}\n{render_todos(ctx.todos)}" if ctx.todos else "Task list cleared.",
            meta={"todos": [{"content": t.content, "status": t.status} for t in ctx.todos]},
        )
