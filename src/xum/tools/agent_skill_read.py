"""agent_skill_read: load a skill's instructions by name."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput


class AgentSkillReadInput(ToolInput):
    name: str = Field(
        description="The skill's name (its directory name), as listed in your skills."
    )


async def unknown_skill(ctx: ToolContext, name: str) -> ToolResult:
    assert ctx.skills is not None
    names = await ctx.skills.skill_names()
    listed = ", ".join(names[:40]) + (" ..." if len(names) > 40 else "")
    return error(f"No skill named {name!r}. Available skills: {listed or '(none)'}.")


class AgentSkillReadTool(Tool):
    name = "agent_skill_read"
    description = (
        "Load a skill: returns the instructions in its SKILL.md (without the frontmatter). Load "
        "a skill when your task matches its description, then follow it. Files the skill refers "
        "to can be read with agent_skill_read_file."
    )
    Input: ClassVar[type[ToolInput]] = AgentSkillReadInput
    read_only = True

    def summary(self, args: AgentSkillReadInput) -> str:
        return args.name

    async def run(self, args: AgentSkillReadInput, ctx: ToolContext) -> ToolResult:
        if ctx.skills is None:
            return error("Skills are not available in this session.")
        name = args.name.strip()
        try:
            body = await ctx.skills.skill_body(name)
        except LookupError:
            return await unknown_skill(ctx, name)
        return ToolResult(
            output=body or "(the skill has no instructions beyond its frontmatter)",
            meta={"skill": name},
        )
