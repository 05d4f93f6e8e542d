"""agent_skill_list: the skills this workspace has, with where each comes from."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

MAX_DESCRIPTION_CHARS = 300


class AgentSkillListInput(ToolInput):
    includeUnadvertised: bool | None = Field(  # the documented (camelCase) parameter name
        default=None,
        description="When true, also list skills hidden from the index (advertise: false or "
        "disable-model-invocation: true). Default false.",
    )


class AgentSkillListTool(Tool):
    name = "agent_skill_list"
    description = (
        "List the skills available in this workspace: name, description, and where each comes "
        "from (project .xum/skills, .agents/skills, .claude/skills, global ~/.xum/skills, "
        "~/.agents/skills, ~/.claude/skills, built-in). Only the skill that wins its name is "
        "listed. Skills marked read-only cannot be changed with agent_skill_write or "
        "agent_skill_delete."
    )
    Input: ClassVar[type[ToolInput]] = AgentSkillListInput
    read_only = True

    async def run(self, args: AgentSkillListInput, ctx: ToolContext) -> ToolResult:
        if ctx.skills is None:
            return error("Skills are not available in this session.")
        everything = await ctx.skills.list_skills()
        shown = [s for s in everything if s.advertised or args.includeUnadvertised]
        if not shown:
            hidden = len(everything)
            extra = f" ({hidden} hidden; pass includeUnadvertised: true)" if hidden else ""
            return ToolResult(output=f"No skills.{extra}", meta={"count": 0})
        lines = []
        for s in shown:
            description = " ".join(s.description.split())
            if len(description) > MAX_DESCRIPTION_CHARS:
                description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
            flags = [s.root]
            if not s.advertised:
                flags.append("unadvertised")
            if not s.user_invocable:
                flags.append("not user-invocable")
            if not s.writable:
                flags.append("read-only")
            lines.append(f"- {s.name} ({', '.join(flags)}): {description}")
        hidden = len(everything) - len(shown)
        if hidden:
            lines.append(f"({hidden} unadvertised skills not shown; pass includeUnadvertised)")
        return ToolResult(
            output="\n".join(lines),
            meta={"count": len(shown), "skills": [s.name for s in shown]},
        )
