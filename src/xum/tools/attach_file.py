"""attach_file: put an image from the workspace into the conversation, so the model sees it
in its next request (a screenshot a test wrote, a rendered chart, a design mock-up).

The image is checked like one a person attaches (PNG, JPEG, GIF or WebP by its bytes, at most
5 MB), stored once in the session's blobs, and carried by the tool result as a reference
(`xum.core.images`). The tool is offered only to models that take images (xum.engine.agent).
Other files (PDF, text) are refused with a pointer to the tool that reads them.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from pydantic import Field

from xum.core.errors import UsageError
from xum.core.images import MAX_IMAGE_BYTES, MEDIA_TYPES, check_image, safe_name
from xum.runtime.base import NotRegularFileError
from xum.store.blobs import SessionBlobs
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.paths import PathRefused, resolve_read_path


class AttachFileInput(ToolInput):
    path: str = Field(description="The path to the file to attach (absolute or relative)")
    filename: str | None = Field(
        default=None, description="Optional filename override to present to the model."
    )
    mediaType: str | None = Field(
        default=None,
        description="Optional media type override when the filename/extension is ambiguous.",
    )


class AttachFileTool(Tool):
    name = "attach_file"
    description = (
        "Attach an image file from the workspace (PNG, JPEG, GIF or WebP, at most "
        f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB) to the conversation so you can see it: a "
        "screenshot, a rendered chart, a design file. The image is shown to you with this "
        "tool's result. Other files are refused: read text with file_read."
    )
    Input: ClassVar[type[ToolInput]] = AttachFileInput
    read_only = True

    def summary(self, args: AttachFileInput) -> str:
        return args.path

    async def run(self, args: AttachFileInput, ctx: ToolContext) -> ToolResult:
        if args.mediaType is not None and args.mediaType not in MEDIA_TYPES:
            return error(
                f"attach_file attaches images only ({', '.join(MEDIA_TYPES)}), "
                f"not {args.mediaType[:80]}; read text files with file_read."
            )
        try:
            path = await resolve_read_path(ctx, args.path)
        except PathRefused as exc:
            return error(str(exc))
        st = await ctx.runtime.stat(path)
        if not st.exists:
            return error(f"{args.path}: no such file (resolved: {path})")
        if not st.is_file:
            return error(f"{args.path} is not a regular file; attach_file attaches image files.")
        if st.size > MAX_IMAGE_BYTES:
            return error(
                f"{args.path} is {st.size:,} bytes; images are limited to {MAX_IMAGE_BYTES:,} "
                "bytes. Scale it down (or save it as JPEG) and attach that."
            )
        try:
            data = await ctx.runtime.read_bytes(path, limit=MAX_IMAGE_BYTES + 1)
        except (NotRegularFileError, IsADirectoryError):
            return error(f"{args.path} is not a regular file; attach_file attaches image files.")
        except PermissionError:
            return error(f"{args.path}: permission denied")
        except FileNotFoundError:
            return error(f"{args.path}: no such file")
        name = safe_name(args.filename or path)
        try:
            check_image(data, args.path)
            part = await asyncio.to_thread(SessionBlobs(ctx.workspace_id).put, data, name)
        except UsageError as exc:
            return error(
                f"{exc.message}; attach_file attaches images only (read text with file_read)."
            )
        size = f", {part['width']}x{part['height']}" if "width" in part else ""
        return ToolResult(
            output=f"Attached {name} ({part['media_type']}{size}, {part['size']:,} bytes).",
            meta={"path": path, "images": [dict(part)]},
            images=[part],
        )
