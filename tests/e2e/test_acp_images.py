"""ACP images end to end: the real `xum acp` in a subprocess advertises
`promptCapabilities.image`, and an `image` prompt block reaches the model with the message."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from acp import RequestError, image_block, text_block

from tests.support.acp import bridge, env_for
from tests.support.images import SVG, png
from tests.support.xum_server import xum_server
from xum.testing import fakellm
from xum.testing.acpeditor import TestEditor
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

PICTURE = png(5, 5)


async def test_an_image_block_goes_to_the_model(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("A red square."))
    encoded = base64.b64encode(PICTURE).decode()
    async with bridge(TestEditor(), repo, env_for(fake_llm)) as (conn, _proc, init):
        assert init.agent_capabilities.prompt_capabilities.image is True
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        answer = await conn.prompt(
            session_id=new.session_id,
            prompt=[text_block("What is this?"), image_block(encoded, "image/png")],
        )
        assert answer.stop_reason == "end_turn"
        with pytest.raises(RequestError, match="not a PNG, JPEG, GIF or WebP"):
            await conn.prompt(
                session_id=new.session_id,
                prompt=[
                    text_block("and this?"),
                    image_block(base64.b64encode(SVG).decode(), "image/svg+xml"),
                ],
            )
    (request,) = fake_llm.requests
    blocks = request.json["messages"][0]["content"]
    assert blocks[0]["text"].startswith("What is this?")
    assert blocks[-1]["source"] == {"type": "base64", "media_type": "image/png", "data": encoded}


async def test_attached_to_a_server_the_image_is_uploaded_there(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(fakellm.text("Seen on the server."))
    encoded = base64.b64encode(PICTURE).decode()
    env = {
        "XUM_SERVER_AUTH_TOKEN": "acp-images-token-0123456789abcdef",
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_llm.url,
    }
    with xum_server(env=env):
        # The bridge finds the server through its lock and sends the image through its API.
        async with bridge(TestEditor(), repo, {}) as (conn, _proc, init):
            assert init.agent_capabilities.prompt_capabilities.image is True
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            answer = await conn.prompt(
                session_id=new.session_id,
                prompt=[text_block("What is this?"), image_block(encoded, "image/png")],
            )
            assert answer.stop_reason == "end_turn"
    (request,) = fake_llm.requests
    assert request.json["messages"][0]["content"][-1]["source"]["data"] == encoded
