"""mcp_resource_read: list the resources this workspace's MCP servers offer, or read one.

Without `uri` it lists resources (every server's, or `server`'s), `LISTED_PER_PAGE` at a time,
each as `server:uri` with its name, type and size; `list_offset` pages through a long list.
With `uri` it reads that resource (`resources/read`): text as it is, binary contents saved
under `$XUM_SCRATCH_DIR/mcp/` and named, the whole bounded like `bash` output. `server` may be
left out when exactly one server lists the URI.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.mcp_call import bounded_result
from xum.tools.mcp_host import McpResource, McpResourceListing

LISTED_PER_PAGE = 40


class McpResourceReadInput(ToolInput):
    server: str | None = Field(
        default=None,
        description="The MCP server's name (as in `mcp__<server>__...`). Optional when reading "
        "a URI only one server lists; narrows the listing otherwise.",
    )
    uri: str | None = Field(
        default=None,
        description="The resource's URI, as listed. Leave it out to list the available "
        "resources instead.",
    )
    list_offset: int | None = Field(
        default=None,
        description="When a listing was cut short, call again with the list_offset it "
        "suggests to see the next resources.",
    )


def _line(resource: McpResource) -> str:
    details = [resource.name]
    if resource.mime_type:
        details.append(resource.mime_type)
    if resource.size is not None:
        details.append(f"{resource.size:,} bytes")
    about = f": {resource.description}" if resource.description else ""
    return f"- {resource.mention} ({', '.join(details)}){about}"


def listing(found: McpResourceListing, offset: int) -> str:
    notes = "".join(f"\n({problem})" for problem in found.errors)
    if not found.resources:
        return "The MCP servers of this workspace list no resources." + notes
    page = found.resources[offset : offset + LISTED_PER_PAGE]
    text = "Available resources (server:uri):\n" + "\n".join(_line(r) for r in page)
    end = offset + len(page)
    if end < len(found.resources):
        text += (
            f"\n(showing {offset + 1}-{end} of {len(found.resources)}; call again with "
            f"list_offset={end} for more)"
        )
    return text + notes


class McpResourceReadTool(Tool):
    name = "mcp_resource_read"
    description = (
        "Read a resource (a file, record or document) offered by one of this workspace's MCP "
        "servers, by its URI. Without a URI, lists the resources the servers offer."
    )
    Input: ClassVar[type[ToolInput]] = McpResourceReadInput
    read_only = True

    def summary(self, args: McpResourceReadInput) -> str:
        return args.uri or f"list {args.server or 'all'}"

    async def run(self, args: McpResourceReadInput, ctx: ToolContext) -> ToolResult:
        access = ctx.mcp
        if access is None:
            return error("MCP servers are not available in this session.")
        host = access.host
        server = (args.server or "").strip() or None
        uri = (args.uri or "").strip()
        if not uri:
            found = await host.list_resources(server)
            return ToolResult(output=listing(found, max(args.list_offset or 0, 0)))
        if server is None:
            found = await host.list_resources()
            owners = sorted({r.server for r in found.resources if r.uri == uri})
            if len(owners) != 1:
                why = "no server lists" if not owners else "several servers list"
                return error(f"{why} {uri!r}: name the server (`server`).\n{listing(found, 0)}")
            server = owners[0]
        outcome = await host.read_resource(server, uri, scratch_dir=ctx.scratch_dir)
        return await bounded_result(outcome, ctx, suffix=".resource.txt")
