"""Calling an MCP server's tool: the registry's path for `mcp__<server>__<tool>` names.

The arguments are parsed like any tool's (bad JSON is an error result naming the problem) and
checked by the server against its own schema. Whatever the server does (fails to start, crashes,
times out, answers with an error) the call ends with a result the model can read; the text is
bounded like `bash` output (head and tail kept, the whole text spilled to a file under
`$XUM_SCRATCH_DIR`). An interrupt cancels the call: the host tells the server so.

Progress. Every call carries a progress token, and what the server reports for it
(`notifications/progress`: a count, maybe a total, maybe a message) goes to the call's live
output stream `progress`, one line per notification (`[3/10] message`), so a front-end shows a
long call moving. Like `bash` output it is a view, masked and bounded by the live stream; the
result is what the model reads.

Images. Image content is saved under the scratch directory (xum.workspaces.mcp.content) and,
when it passes the image checks, also goes to the model with the result (`saved_images`).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xum.core.errors import UsageError
from xum.core.images import MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE, ImagePart
from xum.store.blobs import SessionBlobs
from xum.tools.base import ToolContext, ToolResult, error
from xum.tools.bounds import HEAD_BYTES, TAIL_BYTES, bound_text

if TYPE_CHECKING:
    from xum.tools.base import OutputStream
    from xum.tools.mcp_host import McpCallOutcome, McpPromptOutcome, ProgressSink


async def run_mcp_tool(name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
    from xum.tools.registry import _parse_arguments

    access = ctx.mcp
    if access is None:
        return error(f"{name} is an MCP tool, and MCP servers are not available in this session.")
    arguments = _parse_arguments(name, raw_arguments)
    if isinstance(arguments, ToolResult):
        return arguments
    stream = ctx.open_output(PROGRESS_STREAM) if ctx.open_output is not None else None
    progress = _progress_writer(stream) if stream is not None else None
    try:
        outcome = await access.host.call_tool(
            name, arguments, scratch_dir=ctx.scratch_dir, progress=progress
        )
    finally:
        if stream is not None:
            stream.close()  # flushes: every progress line is out before the result
    result = await bounded_result(outcome, ctx, suffix=".mcp.txt")
    result.images = await asyncio.to_thread(saved_images, result.meta, ctx.workspace_id)
    if result.images:  # for the front-ends' thumbnails, as attach_file gives them
        result.meta["images"] = [dict(image) for image in result.images]
    return result


def saved_images(meta: dict[str, Any], workspace_id: str) -> list[ImagePart]:
    """The images an MCP tool returned, for the model to see: the ones the content reader saved
    under the scratch directory (`meta["files"]`) that pass the image checks (PNG, JPEG, GIF or
    WebP, at most 5 MB; at most 4 per result), stored in the session's blobs. The others stay
    files named in the text, as before."""
    found: list[ImagePart] = []
    files = meta.get("files")
    for entry in files if isinstance(files, list) else []:
        if len(found) >= MAX_IMAGES_PER_MESSAGE:
            break
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        if int(entry.get("bytes") or 0) > MAX_IMAGE_BYTES:
            continue
        try:
            data = Path(entry["path"]).read_bytes()
            found.append(SessionBlobs(workspace_id).put(data, Path(entry["path"]).name))
        except (OSError, UsageError):
            continue  # not an image we send (SVG, audio, too large): it stays a saved file
    return found


PROGRESS_STREAM = "progress"
MAX_PROGRESS_MESSAGE = 500


def _progress_writer(stream: OutputStream) -> ProgressSink:
    def write(done: float, total: float | None, message: str | None) -> None:
        line = f"[{_number(done)}/{_number(total)}]" if total is not None else f"[{_number(done)}]"
        if message:
            # One line per notification: the server's text is cut and kept on it.
            text = " ".join(message.split())[:MAX_PROGRESS_MESSAGE]
            line += f" {text}"
        stream.write(line.encode() + b"\n")

    return write


def _number(value: float) -> str:
    return str(int(value)) if math.isfinite(value) and value == int(value) else f"{value:g}"


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
