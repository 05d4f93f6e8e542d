"""get_goal: the session's goal and what it has used so far."""

from __future__ import annotations

from typing import ClassVar

import orjson

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput


class GetGoalInput(ToolInput):
    pass


class GetGoalTool(Tool):
    name = "get_goal"
    description = (
        "Show the session's goal: goalId (pass it to complete_goal and to set_goal when "
        "replacing), objective, status (active, budget_limited, complete, incomplete, cleared), "
        "budgetCents and spentCents, turnCap and turnsUsed."
    )
    Input: ClassVar[type[ToolInput]] = GetGoalInput
    read_only = True

    async def run(self, args: GetGoalInput, ctx: ToolContext) -> ToolResult:
        if ctx.goals is None:
            return error("Goals are not available in this session.")
        current = ctx.goals.snapshot()
        if current is None:
            return ToolResult(output="No goal is set.", meta={"current": None})
        shown = {k: v for k, v in current.items() if k not in ("baseUsd", "source")}
        return ToolResult(output=orjson.dumps(shown).decode(), meta={"current": shown})
