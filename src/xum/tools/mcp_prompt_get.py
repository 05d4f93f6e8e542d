"""mcp_prompt_get: read a prompt an MCP server offers, with its arguments filled in.

Prompts are named like tools, `mcp__<server>__<prompt>`. An unknown name (or a missing required
argument) gets an error that lists the prompts with their arguments (`?` marks optional ones),
`LISTED_PER_PAGE` at a time; `list_offset` pages through a long list.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.mcp_call import bounded_result
from xum.tools.mcp_host import McpPrompt

LISTED_PER_PAGE = 40


class McpPromptGetInput(ToolInput):
    name: str = Field(
        description='The prompt\'s name from the available list, e.g. "mcp__server__prompt".'
    )
    arguments: dict[str, str] | None = Field(
        default=None,
        description="The prompt's argument values by argument name. Arguments listed with ? "
        "are optional; all others are required.",
    )
    list_offset: int | None = Field(
        default=None,
        description="When an unknown-name error cut the list of prompts short, call again with "
        "the list_offset it suggests to see the next names.",
    )


def _signature(prompt: McpPrompt) -> str:
    args = ", ".join(a.name + ("" if a.required else "?") for a in prompt.arguments)
    about = f": {prompt.description}" if prompt.description else ""
    return f"- {prompt.name}({args}){about}"


def listing(prompts: tuple[McpPrompt, ...], offset: int) -> str:
    if not prompts:
        return "The MCP servers of this workspace offer no prompts."
    page = prompts[offset : offset + LISTED_PER_PAGE]
    text = "Available prompts:\n" + "\n".join(_signature(p) for p in page)
    end = offset + len(page)
    if end < len(prompts):
        text += (
            f"\n(showing {offset + 1}-{end} of {len(prompts)}; call again with "
            f"list_offset={end} for more)"
        )
    return text


class McpPromptGetTool(Tool):
    name = "mcp_prompt_get"
    description = (
        "Read a prompt offered by one of this workspace's MCP servers, with its arguments "
        "filled in, and follow it. An unknown name returns the list of available prompts."
    )
    Input: ClassVar[type[ToolInput]] = McpPromptGetInput
    read_only = True

    def summary(self, args: McpPromptGetInput) -> str:
        return args.name

    async def run(self, args: McpPromptGetInput, ctx: ToolContext) -> ToolResult:
        access = ctx.mcp
        if access is None:
            return error("MCP servers are not available in this session.")
        offset = max(args.list_offset or 0, 0)
        prompt = next((p for p in access.prompts if p.name == args.name.strip()), None)
        if prompt is None:
            return error(f"No MCP prompt named {args.name!r}.\n{listing(access.prompts, offset)}")
        values = dict(args.arguments or {})
        missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
        unknown = sorted(set(values) - {a.name for a in prompt.arguments})
        if missing or unknown:
            problems = []
            if missing:
                problems.append("missing required argument(s) " + ", ".join(missing))
            if unknown:
                problems.append("unknown argument(s) " + ", ".join(unknown))
            return error(f"{prompt.name}: {'; '.join(problems)}.\n{_signature(prompt)}")
        outcome = await access.host.get_prompt(prompt.name, values)
        return await bounded_result(outcome, ctx, suffix=".prompt.txt")
