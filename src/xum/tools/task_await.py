"""task_await: wait for sub-agents and background processes, and read what they produced."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.task_common import Awaitables

DEFAULT_TIMEOUT_S = 600.0
MAX_TIMEOUT_S = 3600.0


class TaskAwaitInput(ToolInput):
    task_ids: list[str] | None = Field(
        default=None,
        description=(
            "Ids returned by task or by a background bash (`bash:<id>`); never made up. "
            "Default: every active sub-agent and background process of this workspace."
        ),
    )
    min_completed: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Return once this many of them are complete (default 1; clamped to how many are "
            "awaited). A sub-agent counts when it finished or sent a new report; a background "
            "process when it printed new output or exited. Set it to the number of tasks to "
            "wait for all of them (best of n)."
        ),
    )
    timeout_secs: float | None = Field(
        default=None,
        ge=0,
        description=(
            f"Longest wait in seconds (default {DEFAULT_TIMEOUT_S:.0f}, at most "
            f"{MAX_TIMEOUT_S:.0f}); 0 checks without waiting. Tasks still running afterwards "
            "keep running and can be awaited again."
        ),
    )


class TaskAwaitTool(Tool):
    name = "task_await"
    description = (
        "Wait for sub-agents and background bash processes and return what they produced: a "
        "finished sub-agent's result header and final message, a running one's new reports, "
        "and a background process's output since the previous read (with its exit status once "
        "it ended). Other awaited tasks are listed with their current status."
    )
    Input: ClassVar[type[ToolInput]] = TaskAwaitInput
    read_only = False  # it consumes reports and output, and must follow a start in one step

    async def run(self, args: TaskAwaitInput, ctx: ToolContext) -> ToolResult:
        if args.task_ids is None:
            ids: list[str] = []
            if ctx.subagents is not None:
                ids += ctx.subagents.children(include_inactive=False)
            if ctx.background is not None:
                ids += ctx.background.active_ids()
            if not ids:
                return ToolResult(
                    output="Nothing to await: this workspace has no active sub-agents or "
                    "background processes.",
                    meta={"tasks": []},
                )
        else:
            ids = [i.strip() for i in args.task_ids if i.strip()]
            if not ids:
                return error("task_ids is empty; omit it to await every active task")
        waiting = Awaitables(ctx, ids)
        if waiting.count == 0:
            return error(
                f"unknown task id(s): {', '.join(waiting.unknown)}. Use the ids task or bash "
                "returned; task_list shows them."
            )
        wanted = min(args.min_completed or 1, waiting.count)
        timeout = min(
            DEFAULT_TIMEOUT_S if args.timeout_secs is None else args.timeout_secs, MAX_TIMEOUT_S
        )
        met = await waiting.wait(wanted, timeout)
        ready = waiting.ready_count()
        blocks, metas = waiting.render()
        summary = (
            f"{ready} of {waiting.count} awaited task(s) complete or with news"
            + ("" if met else f"; timed out after {timeout:g} s waiting for {wanted}")
            + "."
        )
        if waiting.unknown:
            summary += f" Unknown id(s), ignored: {', '.join(waiting.unknown)}."
        return ToolResult(
            output="\n\n".join([summary, *blocks]),
            meta={"tasks": metas, "timed_out": not met, "unknown": waiting.unknown},
        )
