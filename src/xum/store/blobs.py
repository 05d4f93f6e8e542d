"""A session's stored images: `$XUM_ROOT/sessions/<id>/blobs/<sha256>.<ext>`, one file per
distinct image (content-addressed, so the same screenshot sent twice is stored once).

A blob is written durably (fsync of the file and of the directory) before the frame that refers
to it is appended, so a log never names an image a crash lost. Files are never rewritten: a hash
that is already there is left alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from xum.core.fsutil import atomic_write_bytes, fsync_dir
from xum.core.images import EXTENSIONS, ImagePart, image_part, is_sha256
from xum.core.paths import ensure_private_dir, session_dir


def blobs_dir(workspace_id: str) -> Path:
    return session_dir(workspace_id) / "blobs"


class SessionBlobs:
    """The image store of one session; also the `ImageSource` its requests read from."""

    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.directory = blobs_dir(workspace_id)

    def put(self, data: bytes, name: str | None = None) -> ImagePart:
        """Check and store `data`; the reference a message part holds. UsageError for an image
        that is refused (too large, not PNG/JPEG/GIF/WebP)."""
        part = image_part(data, name)
        path = self.directory / f"{part['sha256']}.{EXTENSIONS[part['media_type']]}"
        if not path.exists():
            ensure_private_dir(self.directory)
            atomic_write_bytes(path, data)
        return part

    def path(self, sha256: str) -> Path | None:
        """The stored file of `sha256`, None when there is none (or it is not a hash: nothing
        outside the blobs folder is ever named)."""
        if not is_sha256(sha256):
            return None
        for ext in EXTENSIONS.values():
            candidate = self.directory / f"{sha256}.{ext}"
            if candidate.is_file():
                return candidate
        return None

    def read(self, sha256: str) -> bytes | None:
        path = self.path(sha256)
        if path is None:
            return None
        try:
            return path.read_bytes()
        except OSError:
            return None


def copy_blobs(source_id: str, target_id: str) -> int:
    """Give a fork its parent's images (hard links where the filesystem allows, else copies),
    before the copied frames that refer to them. Returns how many were added."""
    source = blobs_dir(source_id)
    if not source.is_dir():
        return 0
    target = ensure_private_dir(blobs_dir(target_id))
    added = 0
    for path in source.iterdir():
        sha, _, ext = path.name.partition(".")
        if not is_sha256(sha) or ext not in EXTENSIONS.values() or (target / path.name).exists():
            continue
        try:
            os.link(path, target / path.name)
        except OSError:
            atomic_write_bytes(target / path.name, path.read_bytes())
        added += 1
    if added:
        fsync_dir(target)
    return added
