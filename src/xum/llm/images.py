"""Image parts on the three wires. Messages hold references (`xum.core.images.ImagePart`); the
bytes are read here, from the request's `ImageSource`, only when a request body is built.

Without a source (the model does not take images) or without the stored bytes, an image becomes
a short text placeholder, so a request never carries something the provider would refuse with
a 400 and the model still knows an image was there.
"""

from __future__ import annotations

import base64
from typing import Any

from xum.core.images import ImagePart, ImageSource, placeholder

NO_IMAGE_INPUT = "not sent: this model does not take images"
NOT_STORED = "not sent: it is no longer stored"


def image_bytes(part: ImagePart, source: ImageSource | None) -> bytes | str:
    """The image's bytes, or the placeholder text to send instead."""
    if source is None:
        return placeholder(part, NO_IMAGE_INPUT)
    data = source.read(part["sha256"])
    if data is None:
        return placeholder(part, NOT_STORED)
    return data


def anthropic_block(part: ImagePart, source: ImageSource | None) -> dict[str, Any]:
    data = image_bytes(part, source)
    if isinstance(data, str):
        return {"type": "text", "text": data}
    encoded = base64.b64encode(data).decode("ascii")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part["media_type"], "data": encoded},
    }


def data_url(part: ImagePart, data: bytes) -> str:
    return f"data:{part['media_type']};base64,{base64.b64encode(data).decode('ascii')}"


def chat_block(part: ImagePart, source: ImageSource | None) -> dict[str, Any]:
    """OpenAI chat completions: an `image_url` content part with a data URL."""
    data = image_bytes(part, source)
    if isinstance(data, str):
        return {"type": "text", "text": data}
    return {"type": "image_url", "image_url": {"url": data_url(part, data)}}


def responses_block(part: ImagePart, source: ImageSource | None) -> dict[str, Any]:
    """OpenAI Responses: an `input_image` content item with a data URL."""
    data = image_bytes(part, source)
    if isinstance(data, str):
        return {"type": "input_text", "text": data}
    return {"type": "input_image", "image_url": data_url(part, data)}


def tool_images_intro(call_id: str, name: str) -> str:
    """The text before a tool's images on wires whose tool results take text only (OpenAI):
    they follow the results in a user message that says where they came from."""
    return f"The images returned by the {name} tool call {call_id}:"
