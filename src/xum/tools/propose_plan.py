"""propose_plan: present the plan file for the user's review (plan mode)."""

from __future__ import annotations

import hashlib
from typing import ClassVar

from xum.runtime.base import NotRegularFileError
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

MAX_PLAN_BYTES = 1024 * 1024
# The plan travels in the result's meta so a UI can render it as a card; past this size the
# card shows only the path (the file itself is unchanged).
MAX_META_CONTENT = 256 * 1024


class ProposePlanInput(ToolInput):
    pass


class ProposePlanTool(Tool):
    name = "propose_plan"
    description = (
        "Present the plan you wrote in the plan file to the user for review. Write or update "
        "the plan file first (its path is in the plan-mode section of your instructions); this "
        "tool takes no arguments and reads the file itself. The user sees the plan rendered, "
        "so do not repeat it in your reply afterwards."
    )
    Input: ClassVar[type[ToolInput]] = ProposePlanInput
    read_only = True

    async def run(self, args: ProposePlanInput, ctx: ToolContext) -> ToolResult:
        path = ctx.plan_file
        if path is None:
            return error("propose_plan is only available in plan mode.")
        st = await ctx.runtime.stat(path)
        if not st.exists:
            return error(
                f"There is no plan yet: the plan file {path} does not exist. Write the plan "
                "there (file_edit_insert creates the file), then call propose_plan again."
            )
        if st.size > MAX_PLAN_BYTES:
            return error(
                f"The plan file is {st.size:,} bytes; a plan must stay under "
                f"{MAX_PLAN_BYTES:,}. Shorten it, then call propose_plan again."
            )
        try:
            data = await ctx.runtime.read_bytes(path, limit=MAX_PLAN_BYTES + 1)
        except (OSError, NotRegularFileError) as exc:
            return error(f"The plan file {path} cannot be read: {exc}")
        content = data.decode("utf-8", errors="replace")
        if not content.strip():
            return error(
                f"The plan file {path} is empty. Write the plan into it, then call "
                "propose_plan again."
            )
        lines = content.count("\n") + (0 if content.endswith("\n") else 1)
        return ToolResult(
            output=(
                f"The plan ({lines} lines) is now shown to the user for review. Do not repeat "
                "it or its path in your reply; a one-line note that it is ready is enough."
            ),
            meta={
                "plan": {
                    "path": path,
                    "exists": True,
                    "mtime_ns": st.mtime_ns,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "content": content if len(data) <= MAX_META_CONTENT else None,
                    "lines": lines,
                }
            },
        )
