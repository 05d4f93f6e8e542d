"""Images in messages: the reference a message part holds, and the checks every image passes.

An image is stored once per session as a content-addressed file (`xum.store.blobs`); a message
only carries an `ImagePart`, a reference (hash, media type, size, dimensions when cheap to read),
never the bytes. The wire encoders read the bytes through an `ImageSource` when they build a
request, so the session log grows by a few hundred bytes per image, not by its base64.

Only PNG, JPEG, GIF and WebP are accepted, recognised by their magic bytes (never by a file name
or a claimed type), because those are what every provider takes; SVG is never an image here (it
is a document that can carry script).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Literal, NotRequired, Protocol, TypedDict

from xum.core.errors import UsageError

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # per image: Anthropic's own limit, the smallest of the wires
MAX_IMAGES_PER_MESSAGE = 4
MediaType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
MEDIA_TYPES: tuple[MediaType, ...] = ("image/png", "image/jpeg", "image/gif", "image/webp")
EXTENSIONS: dict[str, str] = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
}


class ImagePart(TypedDict):
    """A message part that refers to a stored image."""

    type: Literal["image"]
    sha256: str
    media_type: str
    size: int
    name: NotRequired[str]  # the file name it came from, for people (never a path)
    width: NotRequired[int]
    height: NotRequired[int]


@dataclass(frozen=True, slots=True)
class ImageUpload:
    """An image a front-end received (pasted, dropped, attached by path), not yet stored."""

    data: bytes
    name: str | None = None


class ImageSource(Protocol):
    """Where a request's encoder reads the bytes of the images its messages refer to."""

    def read(self, sha256: str) -> bytes | None:
        """The image's bytes, or None when it is not stored (any more)."""
        ...


def sniff_media_type(data: bytes) -> MediaType | None:
    """The image type `data` is, by its magic bytes; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, media_type: str) -> tuple[int, int] | None:
    """(width, height) where the header says so cheaply (PNG, GIF, JPEG); None otherwise."""
    try:
        if media_type == "image/png" and len(data) >= 24:
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if media_type == "image/gif" and len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if media_type == "image/jpeg":
            return _jpeg_dimensions(data)
    except struct.error:
        return None
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        length = int.from_bytes(data[index + 2 : index + 4], "big")
        # Start-of-frame markers (not DHT 0xC4, JPG 0xC8, DAC 0xCC) carry the size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None


def check_image(data: bytes, name: str = "image") -> MediaType:
    """The media type of an acceptable image; UsageError saying why one is refused."""
    if not data:
        raise UsageError(f"{name} is empty", hint="attach a PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_IMAGE_BYTES:
        raise UsageError(
            f"{name} is {len(data):,} bytes; images are limited to {MAX_IMAGE_BYTES:,} bytes",
            hint="attach a smaller image (scale it down or save it as JPEG)",
        )
    media_type = sniff_media_type(data)
    if media_type is None:
        raise UsageError(
            f"{name} is not a PNG, JPEG, GIF or WebP image",
            hint="attach one of those formats (SVG and other documents are not images here)",
        )
    return media_type


def check_count(count: int) -> None:
    if count > MAX_IMAGES_PER_MESSAGE:
        raise UsageError(
            f"{count} images in one message; the limit is {MAX_IMAGES_PER_MESSAGE}",
            hint="send the others in a following message",
        )


def image_part(data: bytes, name: str | None = None) -> ImagePart:
    """The reference for `data` (checked); the caller stores the bytes under its hash."""
    media_type = check_image(data, name or "image")
    part: ImagePart = {
        "type": "image",
        "sha256": hashlib.sha256(data).hexdigest(),
        "media_type": media_type,
        "size": len(data),
    }
    if name:
        part["name"] = safe_name(name)
    size = dimensions(data, media_type)
    if size is not None:
        part["width"], part["height"] = size
    return part


def safe_name(name: str) -> str:
    """A display name: the last path component, without control characters, bounded."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch for ch in base if ch.isprintable())
    return cleaned[:120] or "image"


def is_sha256(text: str) -> bool:
    return len(text) == 64 and all(ch in "0123456789abcdef" for ch in text)


# What an image costs a request, in tokens, for the context meter (the providers scale large
# images down to about this much; Anthropic counts width * height / 750).
IMAGE_TOKENS_MAX = 1600


def image_tokens(part: ImagePart) -> int:
    width, height = part.get("width"), part.get("height")
    if not width or not height:
        return IMAGE_TOKENS_MAX
    return max(85, min(IMAGE_TOKENS_MAX, width * height // 750))


def message_image_tokens(message: object) -> int:
    """The estimated tokens of the images a logged message carries (its own and its tool
    results'); read leniently, like every reader of the log."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return 0
    total = 0
    for part in message["content"]:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image":
            total += image_tokens(part)  # type: ignore[arg-type]
        for image in part.get("images") or [] if part.get("type") == "tool_result" else []:
            if isinstance(image, dict):
                total += image_tokens(image)  # type: ignore[arg-type]
    return total


def placeholder(part: ImagePart, why: str) -> str:
    """The text a request carries instead of an image it cannot send."""
    return f"[image {part.get('name') or part['sha256'][:12]}: {why}]"
