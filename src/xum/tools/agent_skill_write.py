"""agent_skill_write: create or update a file of a skill (SKILL.md by default)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

SCOPE_HELP = (
    "Where the skill lives: 'project' (default) writes the workspace's .xum/skills/<name>/; "
    "'global' writes the user's ~/.xum/skills/<name>/ ($XUM_ROOT/skills), for every project."
)


class AgentSkillWriteInput(ToolInput):
    name: str = Field(
        description="Skill name (the directory name): lowercase letters and digits in words "
        "joined by single hyphens, at most 64 characters."
    )
    filePath: str | None = Field(  # the documented (camelCase) parameter name
        default=None,
        description="Relative path within the skill directory. Defaults to SKILL.md.",
    )
    content: str = Field(
        description="File content to write. A SKILL.md starts with YAML frontmatter between "
        "--- lines with `name` (the skill name; filled in when missing) and `description`."
    )
    scope: Literal["project", "global"] | None = Field(default=None, description=SCOPE_HELP)


class AgentSkillWriteTool(Tool):
    name = "agent_skill_write"
    description = (
        "Create or replace a file of a skill: its SKILL.md (the default) or a file it refers to "
        "(references/..., scripts/...). A SKILL.md is validated before it is written "
        "(frontmatter, name, description, 1 MB). Writes only xum's own skill roots; skills "
        "from .agents, .claude or built-in roots are never changed in place (writing the name "
        "makes a copy that takes precedence)."
    )
    Input: ClassVar[type[ToolInput]] = AgentSkillWriteInput
    read_only = False
    risk = "write"

    def summary(self, args: AgentSkillWriteInput) -> str:
        return f"{args.name}/{args.filePath or 'SKILL.md'}"

    async def run(self, args: AgentSkillWriteInput, ctx: ToolContext) -> ToolResult:
        if ctx.skills is None:
            return error("Skills are not available in this session.")
        scope = args.scope or "project"
        try:
            change = await ctx.skills.write_skill(scope, args.name, args.filePath, args.content)
        except ValueError as exc:
            return error(f"refused: {exc}")
        except OSError as exc:
            return error(f"the skill file could not be written: {exc.strerror or exc}")
        verb = "Created" if change.created else "Updated"
        output = f"{verb} {change.path} ({scope} skill {args.name.strip()})."
        if change.note:
            output += f" Note: {change.note}."
        return ToolResult(
            output=output,
            meta={"path": change.path, "scope": scope, "created": change.created},
        )
