"""complete_goal: mark the session's goal achieved, which ends its continuation turns."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput


class CompleteGoalInput(ToolInput):
    summary: str = Field(
        description="One or two sentences on why the goal is complete (what was done and how "
        "it was verified)."
    )
    goalId: str | None = Field(
        default=None,
        description="The goalId get_goal reported: the completion is refused if the goal was "
        "replaced or cleared meanwhile.",
    )


class CompleteGoalTool(Tool):
    name = "complete_goal"
    description = (
        "Mark the current goal complete once it is achieved and verified; this ends its "
        "automatic continuation turns (in `xum run`, the run then exits 0). Only this call "
        "completes a goal: saying so in text does not."
    )
    Input: ClassVar[type[ToolInput]] = CompleteGoalInput
    read_only = False

    def summary(self, args: CompleteGoalInput) -> str:
        return args.summary

    async def run(self, args: CompleteGoalInput, ctx: ToolContext) -> ToolResult:
        if ctx.goals is None:
            return error("Goals are not available in this session.")
        current = ctx.goals.snapshot()
        if current is None or current["status"] not in ("active", "budget_limited"):
            return error("There is no running goal to complete (get_goal shows its status).")
        if args.goalId is not None and args.goalId != current["goalId"]:
            return error(
                f"goal_conflict: the running goal is {current['goalId']}, not {args.goalId}: "
                "it was replaced or cleared meanwhile. Call get_goal; nothing was completed.",
                code="goal_conflict",
            )
        summary = args.summary.strip()
        if not summary:
            return error("Say in one or two sentences why the goal is complete.")
        done = {k: v for k, v in current.items() if k not in ("spentCents", "turnsUsed")}
        done.update(status="complete", summary=summary)
        return ToolResult(output=f"The goal is complete: {summary}", meta={"goal": done})
