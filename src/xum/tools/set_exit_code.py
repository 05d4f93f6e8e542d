"""set_exit_code: choose the exit code of a `xum run` (offered only there)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

# `xum run` itself exits 2 when the budget is exceeded, 3 when a goal run stops with its goal
# incomplete, and 130 when interrupted; the agent may not claim those codes, so a script can
# always tell what they mean.
RESERVED_CODES = {
    2: "the budget was exceeded",
    3: "a goal run stopped with its goal incomplete",
    130: "the run was interrupted",
}


class SetExitCodeInput(ToolInput):
    code: int = Field(
        ge=0,
        le=255,
        description="The exit code, 0 to 255 except 2, 3 and 130 (reserved by xum); 0 means "
        "success.",
    )
    reason: str = Field(description="One sentence on why, shown in the run's output.")


class SetExitCodeTool(Tool):
    name = "set_exit_code"
    description = (
        "Set the exit code this `xum run` ends with, for scripts and CI: for example 1 to fail "
        "the step (block a merge) when a review finds problems, 0 when all is well. 2, 3 and "
        "130 are reserved (xum exits 2 when the budget is exceeded, 3 when a goal run stops "
        "with its goal incomplete, 130 when interrupted). Calling it again replaces the earlier "
        "code. It does not end the run."
    )
    Input: ClassVar[type[ToolInput]] = SetExitCodeInput
    read_only = False

    def summary(self, args: SetExitCodeInput) -> str:
        return str(args.code)

    async def run(self, args: SetExitCodeInput, ctx: ToolContext) -> ToolResult:
        if ctx.set_exit_code is None:
            return error("set_exit_code is only available in `xum run` sessions.")
        if args.code in RESERVED_CODES:
            return error(
                f"Exit code {args.code} is reserved: xum exits with it when "
                f"{RESERVED_CODES[args.code]}, so scripts rely on that meaning. The exit code was "
                "not changed; use 1 to fail the run, or another code from 4 to 125."
            )
        ctx.set_exit_code(args.code, args.reason)
        return ToolResult(
            output=f"The run will exit with code {args.code}.",
            meta={"code": args.code, "reason": args.reason},
        )
