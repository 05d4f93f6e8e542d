"""An ACP prompt (content blocks) as the one text message a xum turn takes.

Text blocks are the message. A file the user mentioned arrives either as a link (`resource_link`:
the model is pointed at the path, which it can read with its tools) or embedded with its text
(`resource`, which the bridge accepts: `embeddedContext`), which is appended under a heading that
names the file. Images (`image` blocks: base64 `data` and `mimeType`) go with the message where
the bridge advertises them (`prompt_parts(..., images=True)`; checked like any image,
xum.core.images); audio is not accepted, and a prompt that carries something the bridge does not
take is refused with a clear error rather than sent without it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from xum.acp.toolviews import fenced
from xum.core.errors import UsageError
from xum.core.images import ImageUpload, check_count, check_image

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def _shown(uri: str) -> str:
    """A `file://` URI as its path; anything else as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _join(parts: list[tuple[str, bool]]) -> str:
    """Text blocks as they are; a mention (True) set off by spaces from the words around it."""
    out = ""
    after_mention = False
    for part, mention in parts:
        apart = (mention or after_mention) and out and part
        if apart and not out[-1].isspace() and not part[0].isspace():
            out += " "
        out += part
        after_mention = mention
    return out.strip()


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The prompt's text; images are refused (a bridge that does not advertise them)."""
    return prompt_parts(blocks, images=False)[0]


def prompt_parts(blocks: Sequence[PromptBlock], *, images: bool) -> tuple[str, list[ImageUpload]]:
    """The prompt's text and, with `images`, the images it carries (checked)."""
    parts: list[tuple[str, bool]] = []
    attached: list[str] = []
    pictures: list[ImageUpload] = []
    for block in blocks:
        if isinstance(block, ImageContentBlock) and images:
            pictures.append(_image(block, len(pictures) + 1))
        elif isinstance(block, TextContentBlock):
            parts.append((block.text, False))
        elif isinstance(block, ResourceContentBlock):
            parts.append((f"@{_shown(block.uri)}", True))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append((f"@{_shown(resource.uri)}", True))
                attached.append(f"Contents of {_shown(resource.uri)}:\n{fenced(resource.text)}")
            elif isinstance(resource, BlobResourceContents):
                raise UsageError(
                    f"{_shown(resource.uri)} was attached as binary data, which xum cannot "
                    "send to the model",
                    hint="mention the file by path instead, or attach a text file",
                )
        else:
            raise UsageError(
                f"the prompt contains {block.type} content, which xum does not accept",
                hint="send text; mention files by path",
            )
    text = _join(parts)
    if attached:
        text = "\n\n".join([text, *attached]) if text else "\n\n".join(attached)
    check_count(len(pictures))
    return text, pictures


def _image(block: ImageContentBlock, number: int) -> ImageUpload:
    name = _shown(block.uri).rsplit("/", 1)[-1] if block.uri else f"image {number}"
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(
            f"{name}: the image data is not valid base64", hint="send the image as base64"
        ) from None
    check_image(data, name)
    return ImageUpload(data, name if block.uri else None)
