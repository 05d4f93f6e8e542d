"""MCP tool names: the prefix, the MCP tool family, and collision-free public names.

Naming. An MCP tool is offered to the model as `mcp__<server>__<tool>` and a prompt as
`mcp__<server>__<prompt>`: every other tool name of xum lacks the prefix, so nothing collides
with a built-in tool. Each part is cut down to what every provider accepts in a tool name
(`[A-Za-z0-9_-]`, other characters become `_`), and a name that would still clash with another
one or run past 64 characters ends in `_<8 hex digits>` of a hash of the original server and
tool names instead (`public_names`), so two different tools never share a name and the same
tool keeps its name from request to request.

This module defines no classes: the context imports it on every start, MCP servers or not.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
SEARCH_TOOL = "tool_catalog_search"
PROMPT_TOOL = "mcp_prompt_get"
RESOURCE_TOOL = "mcp_resource_read"
# The tools that exist only because MCP servers are configured (offered only then).
FAMILY_TOOLS = frozenset({SEARCH_TOOL, PROMPT_TOOL, RESOURCE_TOOL})
MAX_NAME = 64  # the shortest limit among the providers' tool-name rules
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def is_mcp_name(name: str) -> bool:
    """A dynamically named MCP tool (or prompt) name."""
    return name.startswith(PREFIX)


def is_family(name: str) -> bool:
    """Part of the MCP tool family: an MCP tool, or one of the tools that serve them."""
    return name.startswith(PREFIX) or name in FAMILY_TOOLS


def _safe(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def _hashed(server: str, item: str) -> str:
    return hashlib.sha256(f"{server}\0{item}".encode()).hexdigest()[:8]


def public_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(server, tool) -> the name the model sees, collision-free (see the module docstring).
    The result depends only on the set of pairs, not on their order."""
    plain: dict[tuple[str, str], str] = {}
    for server, item in sorted(set(pairs)):
        plain[(server, item)] = f"{PREFIX}{_safe(server)}__{_safe(item)}"
    counts: dict[str, int] = {}
    for name in plain.values():
        counts[name] = counts.get(name, 0) + 1
    out: dict[tuple[str, str], str] = {}
    for key, name in plain.items():
        if counts[name] > 1 or len(name) > MAX_NAME:
            suffix = "_" + _hashed(*key)
            name = name[: MAX_NAME - len(suffix)] + suffix
        out[key] = name
    return out
