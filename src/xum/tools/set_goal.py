"""set_goal: set the objective the session keeps working on over automatic continuation turns."""

from __future__ import annotations

from typing import ClassVar

import orjson
from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput


class SetGoalInput(ToolInput):
    objective: str = Field(
        description="A concrete, checkable objective to keep working on over automatic "
        "continuation turns (what done looks like, and how to verify it)."
    )
    budgetCents: int | None = Field(
        default=None,
        description="The goal's budget in cents, more than 0. budgetCents, turnCap or both "
        "must be given: they bound how long the goal runs.",
    )
    turnCap: int | None = Field(
        default=None,
        description="The most automatic continuation turns the goal may take, more than 0.",
    )
    expectedGoalId: str | None = Field(
        default=None,
        description="The goalId get_goal reported; needed to replace a goal that is still "
        "active or budget-limited.",
    )
    replaceExistingGoal: bool | None = Field(
        default=None,
        description="true only when the user explicitly asked to replace the current goal.",
    )


class SetGoalTool(Tool):
    name = "set_goal"
    description = (
        "Set a goal: an objective this session keeps working on, turn after turn, until you "
        "call complete_goal or its budget or turn cap runs out. Use it for work that needs "
        "several turns; give budgetCents, turnCap or both. A goal that is already running is "
        "replaced only when the user asked for that (replaceExistingGoal, with expectedGoalId "
        "from get_goal)."
    )
    Input: ClassVar[type[ToolInput]] = SetGoalInput
    read_only = False

    def summary(self, args: SetGoalInput) -> str:
        return args.objective

    async def run(self, args: SetGoalInput, ctx: ToolContext) -> ToolResult:
        goals = ctx.goals
        if goals is None:
            return error("Goals are not available in this session.")
        objective = args.objective.strip()
        if not objective:
            return error("The objective is empty: say what the goal is and how to check it.")
        if args.budgetCents is None and args.turnCap is None:
            return error(
                "set_goal needs budgetCents, turnCap or both: they bound how long the goal "
                "runs. Nothing was set."
            )
        if (args.budgetCents is not None and args.budgetCents <= 0) or (
            args.turnCap is not None and args.turnCap <= 0
        ):
            return error("budgetCents and turnCap must be more than 0. Nothing was set.")
        if args.budgetCents is not None and not goals.priced:
            return error(
                "This session's model has no known price, so a budget in cents cannot be "
                "enforced. Give a turnCap instead. Nothing was set."
            )
        current = goals.snapshot()
        if current is not None and current["status"] in ("active", "budget_limited"):
            if not args.replaceExistingGoal:
                return error(
                    f"A goal is already running (goalId {current['goalId']}): "
                    f"{current['objective']}\nFinish it with complete_goal, or replace it only "
                    "if the user asked you to (replaceExistingGoal: true, expectedGoalId: "
                    f"{current['goalId']}). Nothing was set."
                )
            if args.expectedGoalId != current["goalId"]:
                return error(
                    f"goal_conflict: the running goal is {current['goalId']}, not "
                    f"{args.expectedGoalId}; it may have been replaced meanwhile. Call get_goal "
                    "and try again. Nothing was set.",
                    code="goal_conflict",
                )
        goal = goals.new_goal_json(objective, args.budgetCents, args.turnCap)
        shown = {k: goal[k] for k in ("goalId", "objective", "status", "budgetCents", "turnCap")}
        return ToolResult(
            output="The goal is set. Work on it; call complete_goal once it is achieved and "
            "verified.\n" + orjson.dumps(shown).decode(),
            meta={"goal": goal},
        )
