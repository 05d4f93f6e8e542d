"""Calling an MCP server's tool: the registry's path for `mcp__<server>__<tool>` names.

The arguments are parsed like any tool's (bad JSON is an error result naming the problem) and
checked by the server against its own schema. Whatever the server does (fails to start, crashes,
times out, answers with an error) the call ends with a result the model can read; the text is
bounded like `bash` output (head and tail kept, the whole text spilled to a file under
`$XUM_SCRATCH_DIR`). An interrupt cancels the call: the host tells the server so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xum.tools.base import ToolContext, ToolResult, error
from xum.tools.bounds import HEAD_BYTES, TAIL_BYTES, bound_text

if TYPE_CHECKING:
    from xum.tools.mcp_host import McpCallOutcome, McpPromptOutcome


async def run_mcp_tool(name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
    from xum.tools.registry import _parse_arguments

    access = ctx.mcp
    if access is None:
        return error(f"{name} is an MCP tool, and MCP servers are not available in this session.")
    arguments = _parse_arguments(name, raw_arguments)
    if isinstance(arguments, ToolResult):
        return arguments
    outcome = await access.host.call_tool(name, arguments, scratch_dir=ctx.scratch_dir)
    return await bounded_result(outcome, ctx, suffix=".mcp.txt")


async def bounded_result(
    outcome: McpCallOutcome | McpPromptOutcome, ctx: ToolContext, *, suffix: str
) -> ToolResult:
    """What a server answered, as a result bounded like `bash` output (the whole text spilled
    to a `suffix` file when it is cut)."""
    text, spill = await bound_text(
        outcome.text,
        runtime=ctx.runtime,
        scratch_dir=ctx.scratch_dir,
        suffix=suffix,
        head_bytes=HEAD_BYTES,
        tail_bytes=TAIL_BYTES,
    )
    meta = dict(outcome.meta)
    if spill is not None:
        meta["spill_path"] = spill
    return ToolResult(output=text, is_error=outcome.is_error, meta=meta)
