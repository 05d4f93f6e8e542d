"""The provider's own web search in a step's request, and on its record.

When a route has the native search (config.json `webSearch.native` on a provider whose API has
it), the segment's frozen tools still list `web_search`: that keeps the agents' tool policies in
charge (an agent that removes `web_search` gets no search of either kind). The request then
carries the provider's search instead of the function tool, and its `request_header` frame
records the search so a replay rebuilds the same request.
"""

from __future__ import annotations

from typing import Any

from xum.llm.types import ToolSpec
from xum.llm.websearch import NativeSearch

TOOL_NAME = "web_search"


def native_search(
    tools: list[ToolSpec], native: NativeSearch | None
) -> tuple[list[ToolSpec], NativeSearch | None]:
    """The function tools a request offers and the native search it carries: the search goes
    only where the tool policy left `web_search` in, and then replaces the function tool."""
    if native is None or not any(t.name == TOOL_NAME for t in tools):
        return tools, None
    return [t for t in tools if t.name != TOOL_NAME], native


def header_value(native: NativeSearch | None) -> dict[str, Any] | None:
    if native is None:
        return None
    return {"max_uses": native.max_uses, "allowed_domains": list(native.allowed_domains)}


def from_header(value: Any) -> NativeSearch | None:
    if not isinstance(value, dict):
        return None
    domains = value.get("allowed_domains")
    return NativeSearch(
        max_uses=int(value.get("max_uses", 5)),
        allowed_domains=tuple(str(d) for d in domains) if isinstance(domains, list) else (),
    )
