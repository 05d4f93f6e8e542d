"""An ACP prompt (content blocks) as the one text message a xum turn takes.

Text blocks are the message. A file the user mentioned arrives either as a link (`resource_link`:
the model is pointed at the path, which it can read with its tools) or embedded with its text
(`resource`, which the bridge accepts: `embeddedContext`), which is appended under a heading that
names the file. Images and audio are not accepted (the bridge does not advertise them), and a
prompt that carries one anyway is refused with a clear error rather than sent without it.
"""

from __future__ import annotations

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
    parts: list[tuple[str, bool]] = []
    attached: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
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
    return text
