"""What the model is told about MCP: the `<mcp>` section, the MCP tool specs, and the change row.

The tools a server offers become `ToolSpec`s here: the server's description (bounded, with the
server named at its end) and its input schema (an object schema, at most `MAX_SCHEMA_BYTES` of
JSON; a larger one is replaced by an open object schema and the description says so). Both are
the server's text, so xum's own framing tags in them are made inert like any other text a
repository or a third party controls.

Cache stability. MCP tools belong to a context segment's frozen tool list like every other
tool, but they are a family apart (`xum.tools.mcp_host.is_family`): a server that appears,
disappears or changes its tools mid-segment does not start a new segment. The `mcp_tools`
digest of the catalog moves, and the engine appends one change row (`catalog_change_text`)
saying what the model can and cannot call now; the frozen list is folded up to date at the next
segment. Only tools loaded with `tool_catalog_search` start a new segment at once, because a
tool list has to grow for the model to call them, and so does the first server of a segment
frozen without any MCP tool (`mcp_servers_added`, see `xum.context.frozen`): its rows could not
name a tool the model can use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence

import orjson

from xum.context.markup import escape_untrusted
from xum.llm.types import ToolSpec
from xum.tools.mcp_host import McpSnapshot
from xum.tools.mcp_names import PROMPT_TOOL, SEARCH_TOOL

MAX_DESCRIPTION_CHARS = 4000
MAX_SCHEMA_BYTES = 64 * 1024
MAX_LISTED = 60  # tool or prompt names listed in the section or a change row
CATALOG_CHANNEL = "mcp_tools"

_OPEN_SCHEMA = {"type": "object", "additionalProperties": True}


def tool_specs(snapshot: McpSnapshot) -> dict[str, ToolSpec]:
    """Public name -> spec, for every tool of the snapshot (name order)."""
    out: dict[str, ToolSpec] = {}
    for tool in snapshot.tools:
        description = escape_untrusted(tool.description.strip())
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[:MAX_DESCRIPTION_CHARS] + " [...]"
        parameters = tool.parameters if isinstance(tool.parameters, dict) else {}
        if parameters.get("type") != "object":
            parameters = {**parameters, "type": "object"}
        if len(orjson.dumps(parameters)) > MAX_SCHEMA_BYTES:
            parameters = dict(_OPEN_SCHEMA)
            description += (
                "\n\n(Its input schema was too large to include; pass the arguments its "
                "documentation names.)"
            )
        origin = f"(Tool {tool.tool!r} of the MCP server {tool.server!r}.)"
        text = f"{description}\n\n{origin}" if description else origin
        out[tool.name] = ToolSpec(tool.name, text, parameters)
    return out


def catalog_digest(catalog: Sequence[ToolSpec]) -> str:
    data = orjson.dumps(
        [(t.name, t.description, t.parameters) for t in catalog], option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha256(data).hexdigest()[:32]


def section(snapshot: McpSnapshot, *, deferred: bool, prompts: bool) -> str:
    """The `<mcp>` block of the system prompt: server names only (never their commands, which
    may carry secrets), how their tools are named, and how to reach them."""
    names = [s.name for s in snapshot.servers if s.status not in ("disabled", "withheld")]
    if not names:
        return ""
    lines = [
        "<mcp>",
        "MCP (Model Context Protocol) servers add tools to this workspace. Servers: "
        + ", ".join(names)
        + ". The user configures them in ~/.xum/mcp.jsonc, with repository overrides in "
        "./.xum/mcp.jsonc, and manages them in Settings → MCP.",
        "Their tools are named mcp__<server>__<tool>.",
    ]
    if deferred:
        lines.append(
            f"Their tools are not in your tool list until you look for them: call {SEARCH_TOOL} "
            "with a few words about what you need, and the tools it finds can be called from "
            "your next step on."
        )
    if prompts and snapshot.prompts:
        listed = [p.name for p in snapshot.prompts[:MAX_LISTED]]
        more = len(snapshot.prompts) - len(listed)
        lines.append(
            f"Prompts they offer (read one with {PROMPT_TOOL}): "
            + ", ".join(listed)
            + (f", and {more} more" if more > 0 else "")
            + "."
        )
    lines.append("</mcp>")
    return "\n".join(lines)


def catalog_change_text(
    catalog: Sequence[ToolSpec], offered: Collection[str], *, can_load: bool
) -> str:
    """The change row's part about MCP tools: which offered ones are gone, which are new."""
    names = {t.name for t in catalog}
    mcp_offered = sorted(n for n in offered if n.startswith("mcp__"))
    gone = [n for n in mcp_offered if n not in names]
    new = [t.name for t in catalog if t.name not in offered]
    parts = ["The MCP tools changed."]
    if gone:
        parts.append("No longer available (calls to them fail): " + _listing(gone) + ".")
    if new:
        how = (
            f"call {SEARCH_TOOL} to load the ones you need before calling them"
            if can_load
            else "they become callable when this conversation next starts a new context "
            "segment (after a compaction or reset)"
        )
        parts.append(f"Available but not in your tool list ({how}): " + _listing(new) + ".")
    if not gone and not new:
        parts.append(
            "The same tools are there, but some descriptions or input schemas changed; if a "
            f"call is refused, load the tool again with {SEARCH_TOOL} to get its new schema."
            if can_load
            else "The same tools are there, but some descriptions or input schemas changed."
        )
    return " ".join(parts)


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    more = len(names) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")
