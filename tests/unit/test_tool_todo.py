"""todo_write / todo_read and set_exit_code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tools import make_ctx
from xum.tools.base import TodoItem
from xum.tools.registry import validate_and_run
from xum.tools.set_exit_code import SetExitCodeInput, SetExitCodeTool
from xum.tools.todo_read import TodoReadInput, TodoReadTool
from xum.tools.todo_write import TodoWriteInput, TodoWriteTool


def todos(*pairs: tuple[str, str]) -> TodoWriteInput:
    return TodoWriteInput.model_validate({"todos": [{"content": c, "status": s} for c, s in pairs]})


async def test_write_replaces_the_list_in_place_and_read_shows_it(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    the_list = ctx.todos
    result = await TodoWriteTool().run(
        todos(
            ("Wrote the parser", "completed"),
            ("Adding tests", "in_progress"),
            ("Update docs", "pending"),
        ),
        ctx,
    )
    assert not result.is_error
    assert result.output.startswith("Task list updated: 1 completed, 1 in progress, 1 pending.")
    assert ctx.todos is the_list
    assert ctx.todos == [
        TodoItem("Wrote the parser", "completed"),
        TodoItem("Adding tests", "in_progress"),
        TodoItem("Update docs", "pending"),
    ]
    shown = await TodoReadTool().run(TodoReadInput(), ctx)
    assert shown.output == (
        "1. [x] Wrote the parser\n2. [~] Adding tests (in progress)\n3. [ ] Update docs"
    )
    assert TodoReadTool.read_only and not TodoWriteTool.read_only


async def test_more_than_one_in_progress_is_refused(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ctx.todos.append(TodoItem("Keep me", "pending"))
    result = await TodoWriteTool().run(todos(("A", "in_progress"), ("B", "in_progress")), ctx)
    assert result.is_error and "at most one" in result.output
    assert ctx.todos == [TodoItem("Keep me", "pending")]


async def test_bad_status_and_empty_content(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    bad = await validate_and_run(
        "todo_write", '{"todos": [{"content": "x", "status": "done"}]}', ctx
    )
    assert bad.is_error and "todos[0].status" in bad.output
    empty = await TodoWriteTool().run(todos(("  ", "pending")), ctx)
    assert empty.is_error and "todos[0].content is empty" in empty.output
    cleared = await TodoWriteTool().run(todos(), ctx)
    assert cleared.output == "Task list cleared." and ctx.todos == []
    assert (await TodoReadTool().run(TodoReadInput(), ctx)).output == "The task list is empty."


async def test_set_exit_code_calls_the_hook(tmp_path: Path) -> None:
    calls: list[tuple[int, str]] = []
    ctx = make_ctx(tmp_path, set_exit_code=lambda code, reason: calls.append((code, reason)))
    result = await SetExitCodeTool().run(SetExitCodeInput(code=1, reason="found a bug"), ctx)
    assert not result.is_error and calls == [(1, "found a bug")]
    assert "exit with code 1" in result.output


async def test_set_exit_code_outside_xum_run_and_out_of_range(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await SetExitCodeTool().run(SetExitCodeInput(code=0, reason="ok"), ctx)
    assert result.is_error and "xum run" in result.output
    with pytest.raises(ValueError):
        SetExitCodeInput(code=256, reason="x")
