"""Image parts on the three wires: references in messages, bytes read only when a request body
is built, a text placeholder where the model takes no images or the bytes are gone."""

from __future__ import annotations

import base64

import pytest

from tests.support.images import SVG, png
from xum.core.errors import UsageError
from xum.core.images import MAX_IMAGE_BYTES, ImagePart, check_count, image_part
from xum.core.messages import Message
from xum.llm import anthropic, openai_chat, openai_responses
from xum.llm.catalog import takes_images
from xum.store.blobs import SessionBlobs

PICTURE = png(3, 5)


class Source:
    def __init__(self, *images: bytes) -> None:
        self.stored = {image_part(data)["sha256"]: data for data in images}

    def read(self, sha256: str) -> bytes | None:
        return self.stored.get(sha256)


def history() -> tuple[ImagePart, list[Message]]:
    part = image_part(PICTURE, "shot.png")
    messages: list[Message] = [
        {"role": "user", "content": [{"type": "text", "text": "what is this?"}, part]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_call", "id": "c1", "name": "attach_file", "arguments": "{}"}
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool_result",
                    "call_id": "c1",
                    "name": "attach_file",
                    "output": "attached shot.png",
                    "images": [part],
                }
            ],
        },
    ]
    return part, messages


def test_a_reference_holds_no_bytes_and_reads_the_header() -> None:
    part = image_part(PICTURE, "/home/me/shot.png")
    assert part["media_type"] == "image/png"
    assert (part["width"], part["height"]) == (3, 5)
    assert part["name"] == "shot.png"  # never a path
    assert part["size"] == len(PICTURE)


def test_refusals_say_why() -> None:
    with pytest.raises(UsageError, match="not a PNG, JPEG, GIF or WebP"):
        image_part(SVG, "x.svg")
    with pytest.raises(UsageError, match="limited to"):
        image_part(png(padding=MAX_IMAGE_BYTES))
    with pytest.raises(UsageError, match="limit is 4"):
        check_count(5)


def test_anthropic_sends_base64_blocks_in_the_message_and_the_tool_result() -> None:
    _, messages = history()
    encoded = anthropic.encode_messages(messages, "claude-sonnet-5-5", Source(PICTURE))
    user = encoded[0]["content"]
    assert user[1]["type"] == "image"
    assert user[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PICTURE).decode(),
    }
    result = encoded[2]["content"][0]
    assert result["type"] == "tool_result"
    assert [b["type"] for b in result["content"]] == ["text", "image"]


def test_chat_sends_data_urls_and_tool_images_after_the_results() -> None:
    _, messages = history()
    encoded = openai_chat.encode_messages(messages, Source(PICTURE))
    url = "data:image/png;base64," + base64.b64encode(PICTURE).decode()
    assert encoded[0]["content"][1] == {"type": "image_url", "image_url": {"url": url}}
    assert [m["role"] for m in encoded] == ["user", "assistant", "tool", "user"]
    assert encoded[3]["content"][1]["image_url"]["url"] == url


def test_responses_sends_input_images() -> None:
    _, messages = history()
    items = openai_responses.encode_input(messages, Source(PICTURE))
    url = "data:image/png;base64," + base64.b64encode(PICTURE).decode()
    assert items[0]["content"][1] == {"type": "input_image", "image_url": url}
    assert items[-1]["role"] == "user"
    assert items[-1]["content"][1] == {"type": "input_image", "image_url": url}
    assert items[-2]["type"] == "function_call_output"


def test_without_a_source_or_bytes_an_image_is_a_placeholder() -> None:
    _, messages = history()
    no_input = anthropic.encode_messages(messages, "m", None)[0]["content"][1]
    assert no_input["type"] == "text"
    assert "does not take images" in no_input["text"]
    gone = openai_chat.encode_messages(messages, Source())[0]["content"][1]
    assert gone["type"] == "text"
    assert "no longer stored" in gone["text"]


def test_blobs_are_stored_once_and_only_hashes_name_files() -> None:
    blobs = SessionBlobs("ws-blobs")
    first = blobs.put(PICTURE, "a.png")
    second = blobs.put(PICTURE, "b.png")
    assert first["sha256"] == second["sha256"]
    assert [p.name for p in blobs.directory.iterdir()] == [f"{first['sha256']}.png"]
    assert blobs.read(first["sha256"]) == PICTURE
    assert blobs.path("../../config") is None
    assert blobs.read("0" * 64) is None


def test_image_input_by_family() -> None:
    assert takes_images("anthropic", "claude-sonnet-5-5")
    assert takes_images("openai", "gpt-6-luna")
    assert takes_images("google", "gemini-3.8-flash")
    assert not takes_images("deepseek", "deepseek-v4-pro")
    assert not takes_images("ollama", "llava")


def test_a_compaction_transcript_names_the_images() -> None:
    from xum.context.compaction import as_transcript

    _, messages = history()
    text = "\n".join(
        p["text"] for m in as_transcript(messages) for p in m["content"] if p["type"] == "text"
    )
    assert text.count("[image shot.png (image/png)]") == 2


def test_the_context_meter_counts_what_an_image_costs_not_its_reference() -> None:
    from xum.core.images import IMAGE_TOKENS_MAX, message_image_tokens

    _, messages = history()
    assert message_image_tokens(messages[0]) == 85  # 3x5 pixels: the floor
    assert message_image_tokens(messages[2]) == 85  # a tool result's image
    big = {**image_part(PICTURE), "width": 4000, "height": 3000}
    unknown = {k: v for k, v in image_part(PICTURE).items() if k not in ("width", "height")}
    message = {"role": "user", "content": [big, unknown]}
    assert message_image_tokens(message) == 2 * IMAGE_TOKENS_MAX
