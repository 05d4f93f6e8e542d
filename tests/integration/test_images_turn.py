"""A message with an image, through a real session and the fake LLM: the log keeps a reference
(the bytes are stored once, in the session's blobs), the request carries the image, and a model
without image input is refused before anything is written."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.support.images import png
from xum.core.errors import UsageError
from xum.core.paths import session_dir
from xum.store.blobs import SessionBlobs
from xum.store.config import update_config
from xum.store.sessionlog import LOG_NAME
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import MODEL, open_session

PICTURE = png(4, 4, padding=20_000)


async def test_an_image_reaches_the_model_and_the_log_holds_a_reference(
    repo: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(fakellm.text("A red square."), fakellm.text("Still red."))
    async with open_session(repo, fake_llm, name_hint="img") as (opened, events):
        ws_id = opened.agent.workspace.id
        part = SessionBlobs(ws_id).put(PICTURE, "square.png")
        result = await opened.agent.run_turn("what is this?", [part])
        assert result.reason == "completed"
        await opened.agent.run_turn("and now?")

    encoded = base64.b64encode(PICTURE).decode()
    for request in fake_llm.requests:
        blocks = request.json["messages"][0]["content"]
        images = [b for b in blocks if b["type"] == "image"]
        assert images[0]["source"]["data"] == encoded  # also in the second turn's history
    log = (session_dir(ws_id) / LOG_NAME).read_text()
    assert encoded[:200] not in log
    assert part["sha256"] in log
    user: list[dict[str, Any]] = [e for e in events if e["type"] == "user-message"]
    assert user[0]["images"][0]["name"] == "square.png"
    assert user[1].get("images") is None


async def test_a_model_without_image_input_is_refused_before_the_turn(
    repo: Path, fake_llm: FakeLLM
) -> None:
    update_config(lambda config: config.setdefault("imageInput", {}).update({MODEL: False}))
    async with open_session(repo, fake_llm, name_hint="img") as (opened, _events):
        part = SessionBlobs(opened.agent.workspace.id).put(PICTURE, "square.png")
        seq = opened.agent.log.last_seq
        with pytest.raises(UsageError, match="does not take images") as caught:
            await opened.agent.run_turn("what is this?", [part])
        assert "imageInput" in (caught.value.hint or "")
        assert opened.agent.log.last_seq == seq  # nothing written
    assert fake_llm.requests == []


async def test_a_fork_keeps_the_images_its_copied_frames_name(
    repo: Path, fake_llm: FakeLLM
) -> None:
    from xum.workspaces.lifecycle import copy_conversation

    fake_llm.script(fakellm.text("A red square."))
    async with open_session(repo, fake_llm, name_hint="img") as (opened, _events):
        part = SessionBlobs(opened.agent.workspace.id).put(PICTURE, "square.png")
        await opened.agent.run_turn("what is this?", [part])
        source = opened.agent.workspace.id
    assert copy_conversation(source, "forkedimages") > 0
    assert SessionBlobs("forkedimages").read(part["sha256"]) == PICTURE
