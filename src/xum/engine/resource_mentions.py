"""MCP resources a message mentions as `@server:uri`, attached to it.

A mention starts at the beginning of the message or after whitespace, names a server of the
workspace (one that is configured and not disabled) and runs to the next whitespace; trailing
sentence punctuation is not part of it. Each mentioned resource is read when the message is sent
(its server started first, as for the first request) and the model receives the message as
typed followed by one `<mcp-resource server=... uri=...>` block per resource: its text, masked
and escaped like any untrusted text, at most `MAX_RESOURCE_CHARS` characters (the rest is left
to `mcp_resource_read`), binary contents only described. A resource that cannot be read gets a
block saying why; the message is sent all the same. At most `MAX_MENTIONS` resources are
attached; the log keeps what was typed and the list (`slash.resources`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from xum.context.markup import escape_untrusted
from xum.engine.userinput import PreparedMessage

if TYPE_CHECKING:
    from xum.tools.mcp_host import McpHost

MAX_MENTIONS = 5
MAX_RESOURCE_CHARS = 64 * 1024
_MENTION = re.compile(r"(?:^|(?<=\s))@([A-Za-z0-9_.-]{1,64}):(\S+)")
_TRAILING = ".,;:!?)]}'\""


def mentions(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """(server, uri) of each mention of a server in `servers`, in order, without repeats."""
    found: list[tuple[str, str]] = []
    for match in _MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(_TRAILING)
        if server in servers and uri and (server, uri) not in found:
            found.append((server, uri))
    return found


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


async def with_resource_mentions(
    host: McpHost | None, text: str, prepared: PreparedMessage | None
) -> PreparedMessage | None:
    """`prepared` (or the plain message `text`) with the resources it mentions attached; None
    when it mentions none."""
    if host is None or "@" not in text:
        return None
    snapshot = await host.snapshot()
    if snapshot is None:
        return None
    servers = {s.name for s in snapshot.servers if s.status not in ("disabled", "withheld")}
    found = mentions(text, servers)
    if not found:
        return None
    blocks: list[str] = []
    for server, uri in found[:MAX_MENTIONS]:
        outcome = await host.read_resource(server, uri, scratch_dir=None)
        body = outcome.text
        if len(body) > MAX_RESOURCE_CHARS:
            left = len(body) - MAX_RESOURCE_CHARS
            body = (
                body[:MAX_RESOURCE_CHARS]
                + f"\n[cut: {left:,} more characters; read the rest with mcp_resource_read]"
            )
        error = ' error="true"' if outcome.is_error else ""
        blocks.append(
            f'<mcp-resource server="{_attribute(server)}" uri="{_attribute(uri)}"{error}>\n'
            f"{escape_untrusted(body)}\n</mcp-resource>"
        )
    if len(found) > MAX_MENTIONS:
        skipped = ", ".join(f"{s}:{u}" for s, u in found[MAX_MENTIONS:])
        blocks.append(
            f"(Only {MAX_MENTIONS} resources are attached to a message; not attached: "
            f"{skipped}. They can be read with mcp_resource_read.)"
        )
    attached = [{"server": s, "uri": u} for s, u in found[:MAX_MENTIONS]]
    base = prepared.text if prepared is not None else text
    full = base + "\n\n" + "\n\n".join(blocks)
    if prepared is not None:
        slash = dict(prepared.slash or {})
        slash["resources"] = attached
        return replace(prepared, text=full, slash=slash)
    return PreparedMessage(full, text, {"kind": "mcp-resources", "resources": attached})
