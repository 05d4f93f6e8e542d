"""tool_catalog_search: find MCP tools by what they do, and load them into the tool list.

With tool search on (the default), MCP tools stay out of the tool list: their definitions would
cost context on every request. The model searches the catalog of MCP tools its agent may use;
the matches are described in the result (name, what it does, its parameters) and recorded as
loaded (`meta.mcp_loaded`), and the engine adds them to the tool list from the next step on
(`xum.engine.contextsync`). The search is a plain word match over names and descriptions,
ranked by where the words are found; `*` lists the catalog.
"""

from __future__ import annotations

import re
from typing import ClassVar

import orjson
from pydantic import Field

from xum.llm.types import ToolSpec
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MAX_PARAMETERS_CHARS = 2000
_WORD = re.compile(r"[a-z0-9]+")


class ToolCatalogSearchInput(ToolInput):
    query: str = Field(
        description="A few words about the capability you need (e.g. 'create github issue'); "
        "'*' lists every MCP tool."
    )
    limit: int | None = Field(
        default=None, description=f"How many matches to return: 1-{MAX_LIMIT}, default 10."
    )


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("__", " ").replace("_", " "))


def rank(catalog: tuple[ToolSpec, ...], query: str) -> list[ToolSpec]:
    """The catalog's tools that match `query`, best first (ties keep catalog order)."""
    if query.strip() in ("", "*"):
        return list(catalog)
    wanted = _words(query)
    phrase = query.strip().lower()
    scored: list[tuple[float, int, ToolSpec]] = []
    for index, spec in enumerate(catalog):
        name_words = set(_words(spec.name))
        text_words = set(_words(spec.description))
        score = 0.0
        for word in wanted:
            if word in name_words:
                score += 3
            elif any(w.startswith(word) for w in name_words):
                score += 2
            if word in text_words:
                score += 1
        if phrase and phrase in spec.name.lower():
            score += 5
        if score:
            scored.append((-score, index, spec))
    return [spec for _, _, spec in sorted(scored, key=lambda item: (item[0], item[1]))]


class ToolCatalogSearchTool(Tool):
    name = "tool_catalog_search"
    description = (
        "Search the tools of this workspace's MCP servers by what they do, and load the "
        "matches: they can be called from your next step on. Use it when you need a capability "
        "your tool list lacks. Returns each match's name, description and parameters."
    )
    Input: ClassVar[type[ToolInput]] = ToolCatalogSearchInput
    read_only = True

    def summary(self, args: ToolCatalogSearchInput) -> str:
        return args.query

    async def run(self, args: ToolCatalogSearchInput, ctx: ToolContext) -> ToolResult:
        access = ctx.mcp
        if access is None:
            return error("MCP servers are not available in this session.")
        limit = args.limit if args.limit is not None else DEFAULT_LIMIT
        if not 1 <= limit <= MAX_LIMIT:
            return error(f"limit must be between 1 and {MAX_LIMIT} (got {limit}).")
        catalog = access.catalog
        if not catalog:
            return ToolResult(
                output="The MCP servers of this workspace offer no tools right now (they may "
                "have failed to start; the user sees why in the session's notices).",
                meta={"mcp_loaded": [], "matches": []},
            )
        matches = rank(catalog, args.query)
        shown = matches[:limit]
        if not shown:
            return ToolResult(
                output=f"No MCP tool matches {args.query!r}. {len(catalog)} MCP tools exist; "
                "try other words, or '*' to list them.",
                meta={"mcp_loaded": [], "matches": []},
            )
        loaded = [s.name for s in shown if s.name not in access.offered]
        lines = []
        for spec in shown:
            state = "already in your tool list" if spec.name in access.offered else "loaded"
            parameters = orjson.dumps(spec.parameters).decode()
            if len(parameters) > MAX_PARAMETERS_CHARS:
                parameters = parameters[:MAX_PARAMETERS_CHARS] + " ..."
            lines.append(f"## {spec.name} ({state})\n{spec.description}\nParameters: {parameters}")
        more = len(matches) - len(shown)
        footer = (
            f"\n\n{more} more tools match; narrow the query or raise limit to see them."
            if more > 0
            else ""
        )
        lead = (
            "Loaded tools can be called from your next step on."
            if loaded
            else "Every match is already in your tool list."
        )
        return ToolResult(
            output=f"{lead}\n\n" + "\n\n".join(lines) + footer,
            meta={"mcp_loaded": loaded, "matches": [s.name for s in shown]},
        )
