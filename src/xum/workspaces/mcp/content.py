"""MCP content blocks (tool results, prompt messages) as the text a tool result carries.

xum's tool results are text, so each block becomes text: text as it is; an image or audio
block is written to a file under the session's scratch directory and named (with its type and
size), which is as much as the result wire carries; a resource link is listed with its URI,
name and type; an embedded resource gives its text, or is saved like an image when it is
binary. When a result has no content blocks but structured content, that is shown as JSON.
It is imported with the first tool result, when the SDK is loaded anyway.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.ids import sortable_id
from xum.core.paths import FILE_MODE, ensure_private_dir

if TYPE_CHECKING:
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        ResourceLink,
        TextResourceContents,
    )

MAX_BINARY_BYTES = 32 * 1024 * 1024  # one saved image or blob


def blocks_text(blocks: Sequence[ContentBlock], *, scratch_dir: str, meta: dict[str, Any]) -> str:
    """The blocks as one text; files written are listed in `meta["files"]`."""
    # Loaded with the first result: the SDK is in memory by then.
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(_binary(block.type, block.data, block.mime_type, scratch_dir, meta))
        elif isinstance(block, ResourceLink):
            parts.append(_link(block))
        elif isinstance(block, EmbeddedResource):
            parts.append(_embedded(block.resource, scratch_dir, meta))
        else:
            kind = getattr(block, "type", None)
            parts.append(f"[content of type {kind!r} that xum does not show]")
    return "\n".join(parts)


def result_text(result: CallToolResult, *, scratch_dir: str, meta: dict[str, Any]) -> str:
    """A `CallToolResult` as text (see the module docstring)."""
    text = blocks_text(result.content or [], scratch_dir=scratch_dir, meta=meta)
    structured = getattr(result, "structured_content", None)
    if not text and structured is not None:
        text = orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode()
    return text or "(the tool returned no content)"


def contents_text(
    contents: Sequence[TextResourceContents | BlobResourceContents],
    *,
    scratch_dir: str | None,
    meta: dict[str, Any],
) -> str:
    """What `resources/read` returned, as text: text contents as they are, binary contents
    saved under `scratch_dir` (or, without one, only described)."""
    parts: list[str] = []
    for item in contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
            continue
        mime = getattr(item, "mime_type", None) or "application/octet-stream"
        uri = getattr(item, "uri", "")
        data = getattr(item, "blob", "")
        if scratch_dir is None:
            size = len(data) * 3 // 4
            parts.append(f"[binary resource {uri} ({mime}, about {size:,} bytes): not shown]")
        else:
            parts.append(_binary("resource", data, mime, scratch_dir, meta, uri=uri))
    return "\n".join(parts) if parts else "(the resource is empty)"


def _link(block: ResourceLink) -> str:
    details = [f"uri: {block.uri}"]
    if getattr(block, "mime_type", None):
        details.append(f"type: {block.mime_type}")
    if getattr(block, "description", None):
        details.append(f"description: {block.description}")
    return f"[resource link {block.name!r}: {', '.join(details)}]"


def _embedded(
    resource: TextResourceContents | BlobResourceContents, scratch_dir: str, meta: dict[str, Any]
) -> str:
    text = getattr(resource, "text", None)
    uri = getattr(resource, "uri", "")
    if isinstance(text, str):
        return f"[resource {uri}]\n{text}"
    mime = getattr(resource, "mime_type", None) or "application/octet-stream"
    return _binary("resource", getattr(resource, "blob", ""), mime, scratch_dir, meta, uri=uri)


def _binary(
    kind: str,
    data: str,
    mime: str,
    scratch_dir: str,
    meta: dict[str, Any],
    uri: str | None = None,
) -> str:
    label = f"{kind} {uri}" if uri else kind
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{label} ({mime}): the server sent data that is not valid base64]"
    if len(raw) > MAX_BINARY_BYTES:
        return f"[{label} ({mime}, {len(raw):,} bytes): too large to keep]"
    suffix = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
    directory = ensure_private_dir(Path(scratch_dir) / "mcp")
    path = directory / f"{sortable_id()}{suffix}"
    atomic_write_bytes(path, raw, mode=FILE_MODE, durable=False)
    meta.setdefault("files", []).append({"path": str(path), "mime_type": mime, "bytes": len(raw)})
    return f"[{label} ({mime}, {len(raw):,} bytes) saved to {path}]"
