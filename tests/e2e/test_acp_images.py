"""ACP images end to end: the real `xum acp` in a subprocess advertises
`promptCapabilities.image`, and an `image` prompt block reaches the model with the message."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from acp import RequestError, image_block, text_block

from tests.support.acp import bridge, env_for
from tests.support.images import SVG, png
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
