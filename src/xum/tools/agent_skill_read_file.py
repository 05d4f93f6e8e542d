"""agent_skill_read_file: read a file that belongs to a skill (references, scripts)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.agent_skill_read import unknown_skill
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_LINES = 2000
MAX_OUTPUT_CHARS = 64 * 1024
MAX_LINE_CHARS = 2000


class AgentSkillReadFileInput(ToolInput):
    name: str = Field(description="The skill's name (its directory name).")
    filePath: str = Field(  # the documented (camelCase) parameter name
        description="The file's path relative to the skill directory, e.g. references/api.md."
    )
    offset: int | None = Field(
        default=None, ge=1, description="First line to show, 1-based (default 1)."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to show (default: up to {MAX_LINES})."
    )


class AgentSkillReadFileTool(Tool):
    name = "agent_skill_read_file"
    description = (
        "Read a file inside a skill's directory (a reference, a template, a script), with its "
        "lines numbered from 1. The path is relative to the skill directory and cannot leave "
        f"it. Shows at most {MAX_LINES} lines or {MAX_OUTPUT_CHARS // 1024} KiB per call; use "
        "offset and limit to page."
    )
    Input: ClassVar[type[ToolInput]] = AgentSkillReadFileInput
    read_only = True

    def summary(self, args: AgentSkillReadFileInput) -> str:
        return f"{args.name}/{args.filePath}"

    async def run(self, args: AgentSkillReadFileInput, ctx: ToolContext) -> ToolResult:
        if ctx.skills is None:
            return error("Skills are not available in this session.")
        name = args.name.strip()
        try:
            data = await ctx.skills.skill_file(name, args.filePath, MAX_FILE_BYTES)
        except FileNotFoundError:
            return error(f"{args.filePath}: no such file in the skill {name}")
        except LookupError:
            return await unknown_skill(ctx, name)
        except ValueError as exc:
            return error(f"refused: {exc}")
        except OSError as exc:
            return error(f"{args.filePath} cannot be read: {exc.strerror or exc}")
        if b"\0" in data[:8192]:
            return error(f"{args.filePath} is a binary file; only text files can be read here.")
        return _render(args, data)


def _render(args: AgentSkillReadFileInput, data: bytes) -> ToolResult:
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    start = args.offset or 1
    if total == 0:
        return ToolResult(output="(empty file)", meta={"total_lines": 0})
    if start > total:
        return error(f"offset {start} is past the end: {args.filePath} has {total} lines")
    end_wanted = total if args.limit is None else min(total, start + args.limit - 1)
    width = len(str(end_wanted))
    out: list[str] = []
    size = 0
    end = start - 1
    for number in range(start, end_wanted + 1):
        line = lines[number - 1].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line clipped]"
        rendered = f"{number:>{width}}\t{line}\n"
        if number - start >= MAX_LINES or (out and size + len(rendered) > MAX_OUTPUT_CHARS):
            break
        out.append(rendered)
        size += len(rendered)
        end = number
    note = ""
    if end < total:
        note = f"[lines {start}–{end} of {total}; continue with offset={end + 1}]"
    if len(data) >= MAX_FILE_BYTES:
        note += f"\n[only the first {MAX_FILE_BYTES // (1024 * 1024)} MiB of the file were read]"
    output = "".join(out) + note
    return ToolResult(
        output=output.rstrip("\n"),
        meta={"start_line": start, "end_line": end, "total_lines": total},
    )
