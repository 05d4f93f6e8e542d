"""A workspace's images: upload one (the composer's paste or drop), serve a stored one (the
transcript's thumbnails).

An upload is the image's raw bytes as the request body (no base64), bounded by the gate at one
image's limit; it is checked (PNG, JPEG, GIF or WebP by magic bytes, at most 5 MB) and stored in
the session's blobs, and the answer is its reference, which `POST .../messages` then names in
`images`. Serving reads only `blobs/<sha256>.<ext>` of that workspace's session: the id is a
hash, never a path, and the content type comes from the file's magic bytes, so a stored file is
never served as SVG or HTML.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Query, Request, Response

from xum.core.errors import XumError
from xum.core.images import MAX_IMAGE_BYTES, is_sha256, sniff_media_type
from xum.server.errors import ApiError, from_xum_error, not_found
from xum.server.hosting import workspace_or_404
from xum.store.blobs import SessionBlobs

router = APIRouter(prefix="/api/workspaces", tags=["images"])

# The gate's body bound for an upload: one image plus nothing (the body is the image).
UPLOAD_BODY_BYTES = MAX_IMAGE_BYTES


@router.post("/{workspace_id}/images", status_code=201)
async def upload_image(
    workspace_id: str, request: Request, name: str | None = Query(None, max_length=255)
) -> dict[str, Any]:
    record = workspace_or_404(workspace_id)
    data = await request.body()
    try:
        part = await asyncio.to_thread(SessionBlobs(record.id).put, data, name)
    except XumError as exc:
        raise from_xum_error(exc) from None
    return dict(part)


@router.get("/{workspace_id}/images/{sha256}")
async def get_image(workspace_id: str, sha256: str) -> Response:
    record = workspace_or_404(workspace_id)
    if not is_sha256(sha256):
        raise ApiError(422, "invalid_request", "an image is named by its sha256 (64 hex digits)")
    path = SessionBlobs(record.id).path(sha256)
    if path is None:
        raise not_found(f"workspace '{record.id}' has no image {sha256[:12]}")
    data = await asyncio.to_thread(path.read_bytes)
    media_type = sniff_media_type(data)
    if media_type is None:  # a file that is not an image was put there by hand
        raise not_found(f"workspace '{record.id}' has no image {sha256[:12]}")
    return Response(
        data,
        media_type=media_type,
        headers={
            "Cache-Control": "private, max-age=31536000, immutable",  # content-addressed
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "X-Content-Type-Options": "nosniff",
        },
    )
