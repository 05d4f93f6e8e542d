"""task_apply_git_patch: bring a fork-isolated sub-agent's commits into this checkout."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError


class TaskApplyGitPatchInput(ToolInput):
    task_id: str = Field(description="The sub-agent whose commits to apply.")
    dry_run: bool | None = Field(
        default=None,
        description=(
            "Try the patch in a temporary worktree at your HEAD and discard it; your checkout "
            "is not touched."
        ),
    )
    expected_head_sha: str | None = Field(
        default=None,
        description="Refuse unless your checkout's HEAD is this commit (a full or short sha).",
    )
    three_way: bool | None = Field(
        default=None, description="Use `git am --3way` (fall back to a three-way merge)."
    )
    force: bool | None = Field(
        default=None, description="Apply even though these commits were applied here before."
    )


class TaskApplyGitPatchTool(Tool):
    name = "task_apply_git_patch"
    description = (
        "Apply the commits a fork-isolated sub-agent made since it was forked to your checkout "
        "(`git format-patch` of its branch, then `git am`), keeping their messages and authors. "
        "Refused while the sub-agent runs, when your index has staged changes, or when "
        "expected_head_sha does not match; a failed apply is rolled back (`git am --abort`). "
        "Uncommitted changes the sub-agent left are not part of the patch."
    )
    Input: ClassVar[type[ToolInput]] = TaskApplyGitPatchInput
    read_only = False
    risk = "write"

    def summary(self, args: TaskApplyGitPatchInput) -> str:
        return args.task_id

    async def run(self, args: TaskApplyGitPatchInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return error("sub-agents are not available in this session")
        try:
            outcome = await ctx.subagents.apply_patch(
                args.task_id.strip(),
                dry_run=bool(args.dry_run),
                expected_head_sha=(args.expected_head_sha or "").strip() or None,
                three_way=bool(args.three_way),
                force=bool(args.force),
            )
        except SubAgentError as exc:
            return error(str(exc))
        return ToolResult(output=outcome.message, is_error=not outcome.ok, meta=outcome.meta)
