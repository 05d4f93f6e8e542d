"""Images attached in the terminal UI's composer with `/image <path>`, held until the next
message goes out (which carries them; docs/images.md).

The path is the user's, on this machine: `~` expands and a relative path is taken from the
directory `xum tui` was started in, as a shell would. The image is checked at once (type by its
bytes, size, count), so a refusal shows when it is attached, not when the message is sent.
"""

from __future__ import annotations

import re
from pathlib import Path

from xum.core.errors import UsageError
from xum.core.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    ImageUpload,
    check_image,
    safe_name,
)

_COMMAND = re.compile(r"^/image(?:\s+(?P<arg>.*))?$", re.DOTALL)


def image_command(text: str) -> str | None:
    """The argument of an `/image` command (`""` for none), or None when `text` is not one."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    return (match.group("arg") or "").strip()


class PendingImages:
    """The images the next message carries."""

    def __init__(self) -> None:
        self.images: list[ImageUpload] = []

    @property
    def names(self) -> list[str]:
        return [image.name or "image" for image in self.images]

    def command(self, argument: str, base: Path) -> str:
        """`/image <path>` holds an image; `/image clear` drops them. The note to show."""
        if argument == "clear":
            self.clear()
            return "no images attached"
        return f"[image: {self.attach(argument, base)}] goes with your next message"

    def attach(self, raw_path: str, base: Path) -> str:
        """Check and hold the image at `raw_path`; its display name. UsageError saying why one
        is refused."""
        if not raw_path:
            raise UsageError(
                "/image needs a path", hint="type /image <path to a PNG, JPEG, GIF or WebP file>"
            )
        if len(self.images) >= MAX_IMAGES_PER_MESSAGE:
            raise UsageError(
                f"a message carries at most {MAX_IMAGES_PER_MESSAGE} images",
                hint="send this message first, or /image clear",
            )
        path = Path(raw_path.strip("'\"")).expanduser()
        if not path.is_absolute():
            path = base / path
        name = safe_name(str(path))
        try:
            if not path.is_file():
                raise UsageError(f"{raw_path}: no such file", hint="give the path of an image file")
            size = path.stat().st_size
            if size > MAX_IMAGE_BYTES:
                raise UsageError(
                    f"{name} is {size:,} bytes; images are limited to {MAX_IMAGE_BYTES:,} bytes",
                    hint="attach a smaller image (scale it down or save it as JPEG)",
                )
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"{raw_path}: {exc.strerror or exc}") from None
        check_image(data, name)
        self.images.append(ImageUpload(data, name))
        return name

    def take(self) -> list[ImageUpload]:
        taken, self.images = self.images, []
        return taken

    def clear(self) -> None:
        self.images = []
