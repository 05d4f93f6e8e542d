"""agent_skill_delete: remove a file of a skill, or the whole skill."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xum.tools.agent_skill_write import SCOPE_HELP
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput


class AgentSkillDeleteInput(ToolInput):
    name: str = Field(description="Skill name to delete.")
    target: Literal["file", "skill"] | None = Field(
        default=None,
        description="Deletion target: 'file' to delete a specific file, 'skill' to remove the "
        "entire skill directory (defaults to file).",
    )
    filePath: str | None = Field(  # the documented (camelCase) parameter name
        default=None,
        description="Relative file path within the skill directory to delete. Required when "
        "target is 'file'.",
    )
    confirm: bool = Field(description="Must be true to confirm deletion.")
    scope: Literal["project", "global"] | None = Field(default=None, description=SCOPE_HELP)


class AgentSkillDeleteTool(Tool):
    name = "agent_skill_delete"
    description = (
        "Delete a file of a skill, or (target 'skill') the whole skill directory. Only skills "
        "in xum's own roots can be deleted (.xum/skills, ~/.xum/skills); .agents, .claude and "
        "built-in skills are read-only. confirm must be true."
    )
    Input: ClassVar[type[ToolInput]] = AgentSkillDeleteInput
    read_only = False
    risk = "write"

    def summary(self, args: AgentSkillDeleteInput) -> str:
        if (args.target or "file") == "skill":
            return args.name
        return f"{args.name}/{args.filePath or ''}"

    async def run(self, args: AgentSkillDeleteInput, ctx: ToolContext) -> ToolResult:
        if ctx.skills is None:
            return error("Skills are not available in this session.")
        if args.confirm is not True:
            return error("Nothing deleted: pass confirm: true to delete.")
        scope = args.scope or "project"
        target = args.target or "file"
        name = args.name.strip()
        try:
            change = await ctx.skills.delete_skill(scope, name, target, args.filePath)
        except FileNotFoundError:
            return error(f"{args.filePath}: no such file in the skill {name}")
        except LookupError as exc:
            return error(f"Nothing deleted: {exc.args[0] if exc.args else name}.")
        except ValueError as exc:
            return error(f"refused: {exc}")
        except OSError as exc:
            return error(f"the skill could not be deleted: {exc.strerror or exc}")
        what = f"the skill {name}" if target == "skill" else f"{args.filePath} of the skill {name}"
        output = f"Deleted {what} ({change.path})."
        if change.note:
            output += f" Note: {change.note}."
        return ToolResult(output=output, meta={"path": change.path, "scope": scope})
