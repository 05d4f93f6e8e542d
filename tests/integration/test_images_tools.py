"""Images the agent brings in: `attach_file` on a workspace file, and an MCP tool's image
content, reach the model in the next request (as stored references in the log)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from tests.mcp.support import server_entry, write_config
from tests.support.images import SVG, png
from xum.core.paths import session_dir
from xum.store.config import update_config
from xum.store.sessionlog import LOG_NAME
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import MODEL, open_session

PICTURE = png(8, 2)


def tool_names(request: Any) -> list[str]:
    return [t["name"] for t in request.json.get("tools", [])]


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool-result"]


async def test_attach_file_shows_the_model_a_workspace_image(repo: Path, fake_llm: FakeLLM) -> None:
    (repo / "shot.png").write_bytes(PICTURE)
    (repo / "logo.svg").write_bytes(SVG)
    fake_llm.script(
        fakellm.tool_call("attach_file", {"path": "shot.png"}, id="c1"),
        fakellm.tool_call("attach_file", {"path": "logo.svg"}, id="c2"),
        fakellm.text("It is red."),
    )
    async with open_session(repo, fake_llm, name_hint="attach") as (opened, events):
        await opened.agent.run_turn("look at shot.png")
        ws_id = opened.agent.workspace.id
    assert "attach_file" in tool_names(fake_llm.requests[0])
    attached, refused = results(events)
    assert not attached["is_error"]
    assert attached["output"].startswith("Attached shot.png (image/png, 8x2")
    assert attached["meta"]["images"][0]["name"] == "shot.png"  # for the front-ends' thumbnails
    assert refused["is_error"] and "not a PNG, JPEG, GIF or WebP" in refused["output"]
    # The second request carries the image inside the tool result.
    result = fake_llm.requests[1].json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    image = result["content"][1]
    assert image["source"]["data"] == base64.b64encode(PICTURE).decode()
    assert base64.b64encode(PICTURE).decode() not in (session_dir(ws_id) / LOG_NAME).read_text()


async def test_attach_file_is_not_offered_to_a_model_without_image_input(
    repo: Path, fake_llm: FakeLLM
) -> None:
    update_config(lambda config: config.setdefault("imageInput", {}).update({MODEL: False}))
    fake_llm.script(fakellm.text("ok"))
    async with open_session(repo, fake_llm, name_hint="attach") as (opened, _events):
        await opened.agent.run_turn("hello")
    assert "attach_file" not in tool_names(fake_llm.requests[0])


async def test_an_mcp_image_reaches_the_model(
    repo: Path, fake_llm: FakeLLM, xum_root: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"t": server_entry(tools="picture")}, toolSearch=False)
    fake_llm.script(fakellm.tool_call("mcp__t__picture", {}), fakellm.text("seen"))
    async with open_session(repo, fake_llm, name_hint="mcp") as (opened, events):
        await opened.agent.run_turn("show me")
    (picture,) = results(events)
    saved = Path(picture["meta"]["files"][0]["path"])
    assert "saved to" in picture["output"]  # still saved and named, as before
    assert picture["meta"]["images"][0]["media_type"] == "image/png"
    result = fake_llm.requests[1].json["messages"][-1]["content"][0]
    blocks = result["content"]
    assert blocks[0]["type"] == "text"
    (image,) = [b for b in blocks if b["type"] == "image"]
    assert base64.b64decode(image["source"]["data"]) == saved.read_bytes()
